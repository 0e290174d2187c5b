"""kmt: apply the series, build, boot under QEMU with MTE, test.

  python3 -m kmt check [--all]    the make-check matrix (--all: every configuration)
  python3 -m kmt run              defconfig kernel, sync mode: kasan KUnit + mte kselftests
  python3 -m kmt prepare          unpack the base and apply the series only
  python3 -m kmt build CONFIG     build one configuration (lean, full)
  python3 -m kmt parse LOG CELL   analyse a saved console log offline
  python3 -m kmt export BRANCH    format-patch base..BRANCH into patches/
  python3 -m kmt signoff "Name <email>"
                                  author and sign-off of every patch: the submitter's
  python3 -m kmt backport-messages LINUX_GIT
                                  every backport's upstream changelog, from that
                                  mainline clone (git show -s <id>)
  python3 -m kmt bench [--quick]  baseline vs patched: instruction counts, time ratios
  python3 -m kmt series-check [--all | --gate G ...]
                                  the series' quality gates (checkpatch, maintainers,
                                  warnings; --all adds bisect and configs)
  python3 -m kmt cells            list the matrices
  python3 -m kmt kunitpy          the series' KUnit suites through kunit.py, compared
                                  with the last make check's cells (ALL=1 runs it)
  python3 -m kmt othersuites [readme]
                                  slub's, kfence's and the lib KUnit suites under KASAN
                                  HW_TAGS, each mode (ALL=1 runs it); readme: their
                                  table into docs/other-suites.md
  python3 -m kmt lava-run [--cell sync]
                                  the cell's LAVA job through lava-run here, compared
                                  with its direct run
  python3 -m kmt lava [--all] [--url-base URL]
                                  one LAVA job per cell (build/lava/), validated
  python3 -m kmt --cell sync lava-import LOG --lab L --device D --job N
                                  a lab's run of that cell's job (its LAVA log) into
                                  results/lab/ and results/<matrix>.json (lab_cells)
Options: --dry-run (check, run: print the plan, the builds and every QEMU
command; signoff: say what would change; nothing is run or written),
--cell NAME (repeatable),
APPLY=0 in the environment or --no-apply builds the kernel tree as it is.
"""

import argparse
import json
import os
import signal
import subprocess
import sys

from . import (backport, bases, bench, build, compare, coverletter, docs, identity, kasancost,
               kunitpy, lava, lavarun, log, matrix,
               othersuites,
               paths, plan, plot, provenance, refbench, results, series, source, targets)


def setup_host(extra=()):
    """The host packages every command needs, the base's, and extra."""
    with log.phase('host packages'):
        log.run(['bash', os.path.join(paths.REPO, 'scripts', 'setup-host.sh')],
                env={'KMT_HOST_PKGS': ' '.join(tuple(paths.BASE.host_packages) +
                                               tuple(extra))})


def tooling_selftests():
    """The tooling's own tests (no kernel, no QEMU), as a record of the matrix.
    They run in a fresh interpreter on the default base's layout (kmt/selftest.py)."""
    with log.phase('tooling self-tests'):
        logfile = os.path.join(paths.LOGS, 'tooling-selftests.log')
        os.makedirs(paths.LOGS, exist_ok=True)
        outfile = logfile[:-len('.log')] + '.json'
        env = {k: v for k, v in os.environ.items() if k != 'KMT_BASE'}
        res = subprocess.run([sys.executable, '-m', 'kmt.selftest', logfile, outfile],
                             cwd=paths.REPO, env=env)
        if res.returncode != 0 or not os.path.exists(outfile):
            raise log.StepError('the tooling self-tests did not run (log %s)' % logfile)
        with open(outfile) as f:
            outcome = json.load(f)
        tests = [results.test('tooling', name, results.FAIL,
                              'see ' + os.path.relpath(logfile, paths.REPO))
                 for name in outcome['failed']]
        tests += [results.test('tooling', name, results.SKIP, reason)
                  for name, reason in outcome['skipped']]
        npass = outcome['run'] - len(outcome['failed']) - len(outcome['skipped'])
        tests += [results.test('tooling', 'passed-%d' % i, results.PASS)
                  for i in range(npass)]
        log.info('tooling self-tests: %d run, %d failed, %d skipped (log %s)' % (
            outcome['run'], len(outcome['failed']), len(outcome['skipped']),
            os.path.relpath(logfile, paths.REPO)))
    return results.record('tooling', ['tooling'], '-', tests, (),
                          os.path.relpath(logfile, paths.REPO))


def bench_plot():
    """results.json -> results.png next to it; None, or why there is no plot."""
    outdir = os.path.join(paths.RESULTS, 'bench')
    why = plot.write_png(os.path.join(outdir, 'results.json'),
                         os.path.join(outdir, 'results.png'))
    if why:
        log.warn('no plot: ' + why)
    return why


def bench_smoke_record(apply):
    """QUICK=1 make bench, so that the benchmark harness cannot rot: every
    benchmark must report a non-zero count for both kernels."""
    tests, problems = [], []
    try:
        result, _ = bench.run(quick=True, apply=apply)
        for r in result['records']:
            if r['metric'] != 'insn_per_op':
                continue
            ok = r['value'] > 0
            tests.append(_bench_test('%s/%s/%s' % (r['benchmark'], r['kernel'], r['kasan']),
                                     ok, 'no instructions counted'))
        problems += [results.problem('bench', p) for p in result['problems']]
        # The kmt-count plugin: its exact-count self-test, and figures for
        # every benchmark on both kernels (kmt/plugin.py).
        st = result.get('plugin_selftest') or {'status': 'fail', 'errors': ['did not run']}
        tests.append(results.test('bench-quick', 'plugin-selftest', st['status'],
                                  '; '.join(st['errors'])))
        # The counts come from the QEMU contrib plugin posting; one boot is
        # counted by kmt-count too, and the two must agree exactly.
        chk = result.get('plugin_check') or {'result': 'did not run', 'differences': []}
        tests.append(_bench_test('plugin-contrib-vs-kmt-count', chk['result'] == 'identical',
                                 '; '.join(chk['differences']) or chk['result']))
        tests += [_bench_test('%s/%s/%s/plugin' % (r['benchmark'], r['kernel'], r['kasan']),
                              r['value'] > 0, 'the plugin counted nothing')
                  for r in result['records'] if r['metric'] == 'plugin_insn_per_op']
        # Part 2's promise, from the plugin's call chains (each failed
        # check is also one of result['problems']).
        tests += [_bench_test(name, not p, p)
                  for name, p in bench.untagged_checks(result['records'],
                                                       result['series_empty'])]
        why = bench_plot()
        tests.append(_bench_test('plot', not why, why))
    except log.StepError as e:
        problems.append(results.problem('bench', str(e)))
    return results.record('bench', ['bench-quick'], 'off,sync', tests, problems,
                          'build/logs/bench')


def _bench_test(name, ok, why):
    return results.test('bench-quick', name, results.PASS if ok else results.FAIL,
                        '' if ok else why or '')


# Commands whose dry run is honest: it runs nothing and writes nothing.
DRY_RUN_COMMANDS = ('check', 'run', 'signoff', 'backport-messages', 'cells')


def cmd_postings(args):
    from . import postings, postproof
    chosen = postings.chosen(postings.load(), args.names)
    if args.action == 'list':
        for p in chosen:
            print('%-12s %-8s %s\n%12s %s' % (p.name, p.kind, p.what, '', p.status))
        return 0
    if args.action == 'readme':
        marker = 'postings-%s' % paths.BASE_NAME
        replace_readme_section(marker, postproof.markdown(chosen, docs.read_section(marker)))
        return 0
    if args.action == 'prove' and args.rescore:
        return postproof.rescore(chosen)
    tag = None if args.action == 'check' and args.static else source.ensure_base()
    if args.action == 'write':
        for p in chosen:
            postings.write(p, tag)
        return 0
    if args.action == 'prove':
        return postproof.prove_all(chosen, tag, args.runner, args.cell)
    if args.action == 'measure':
        return postproof.measure_all(chosen, tag)
    found = postings.check(chosen, tag, with_tree=not args.static)
    if not args.names:
        from . import reverts
        found['series'] = postings.coverage_problems(chosen, reverts.series_subjects())
    for name, problems in found.items():
        print('%s: %s' % (name, 'fit to send' if not problems else
                           '%d problem(s)\n  ' % len(problems) + '\n  '.join(problems)))
    return 1 if any(found.values()) else 0


def cmd_reverts(args):
    from . import reverts
    entries = reverts.load() + reverts.load_mutations()
    if args.changes:
        entries = [e for e in entries if any(c in e.change or c == e.slug for c in args.changes)]
        if not entries:
            raise log.StepError('no entry of reverts.toml matches %s' % ' '.join(args.changes))
    if args.action == 'list':
        for e in entries:
            print('%s (cell %s)\n  fails: %s%s' % (e.change, e.cell, ' '.join(e.fails),
                                                    '\n  passes: ' + ' '.join(e.passes)
                                                    if e.passes else ''))
        return 0
    if args.action == 'readme':
        table = reverts.markdown(reverts.load())
        mutations = reverts.load_mutations()
        if mutations:
            table += '\n' + reverts.markdown_mutations(mutations)
        replace_readme_section('reverts-%s' % paths.BASE_NAME, table)
        return 0
    setup_host()
    source.ensure_base()
    return reverts.run_all(entries)


def cmd_matrix(args, name):
    if args.dry_run:
        print('\n'.join(plan.matrix_plan(name, args.cell)))
        return 0
    setup_host()
    extra = []
    if name.startswith('check') and not args.cell:
        extra.append(tooling_selftests())
    records, c, summary = matrix.run_matrix(name, cells=args.cell, apply=args.apply,
                                            extra_records=extra)
    if name == 'check-all' and not args.cell:
        # The series' suites through kunit.py, compared with the cells above.
        records.append(kunitpy.record(records))
        # The other in-tree suites under HW_TAGS (docs/other-suites.md).
        records.append(othersuites.record())
    if name.startswith('check') and not args.cell:
        records.append(bench_smoke_record(args.apply))
        records += series.run(series.QUICK_GATES)
        c = matrix.counts(records)
        matrix.write_summary(dict(summary, cells=records))
    matrix.print_table(records)
    log.summary()
    print('\nResults: %s' % os.path.relpath(os.path.join(paths.RESULTS, name + '.json'),
                                             paths.REPO))
    line = '%d passed, %d failed, %d skipped' % (c['pass'], c['fail'], c['skip'] + c['xfail'])
    print(line)
    return 1 if c['fail'] else 0


def write_check_cover():
    """make cover on a base whose cover letter quotes make check (7.3): the
    table of its last check run, into the cover letter and the README
    section of that base (between <!-- check-BASE:begin/end --> markers)."""
    res_json = os.path.join(paths.RESULTS, 'check.json')
    if not os.path.exists(res_json):
        raise log.StepError('no %s: run BASE=%s make check first' % (res_json, paths.BASE_NAME))
    with open(res_json) as f:
        summary = json.load(f)
    if summary.get('series_head') is None or not summary.get('series'):
        raise log.StepError('%s is a run without the series: run BASE=%s make check'
                            % (res_json, paths.BASE_NAME))
    table = matrix.markdown_cells(summary)
    md = os.path.join(paths.RESULTS, 'check.md')
    with open(md, 'w') as f:
        f.write(table)
    # The letter's table has the kernel cells only: the tooling's own
    # tests and the series gates mean nothing to a list reader.
    cover_md = os.path.join(paths.RESULTS, 'check-cover.md')
    with open(cover_md, 'w') as f:
        f.write(matrix.markdown_cells(summary, kernel_only=True))
    out = coverletter.write_cover_letter(
        os.path.join(paths.REPO, 'docs', paths.BASE.cover_template), cover_md,
        base=summary['base'], config_symbols=provenance.kconfig_symbols(source.BRANCH),
        cells=[c['cell'] for c in summary['cells']])
    log.info('wrote %s' % os.path.relpath(out, paths.REPO))
    replace_readme_section('check-%s' % paths.BASE_NAME, table)
    return 0


def replace_readme_section(marker, table):
    """Put table into its section of README.md or docs/*.md."""
    page = docs.replace_section(marker, table)
    log.info('updated the %s section of %s' % (marker, page))
    return page


def _terminate(signum, frame):
    raise KeyboardInterrupt


def tree_with_series(args):
    """The kernel tree unpacked, with the series applied unless --no-apply."""
    tag = source.ensure_base()
    if args.apply:
        source.apply_series(tag=tag)
    return tag


def cmd_check(args):
    return cmd_matrix(args, 'check-all' if args.all else 'check')


def cmd_run(args):
    return cmd_matrix(args, 'run')


def cmd_setup(args):
    setup_host()
    return done()


def cmd_prepare(args):
    tree_with_series(args)
    log.info('kernel tree: %s (branch %s)' % (paths.SRC, source.git(
        ['symbolic-ref', '--short', 'HEAD'], check=False).stdout.strip()))
    return done()


def cmd_build(args):
    tree_with_series(args)
    print('\n'.join(build.build_all(args.config)))
    return done()


def cmd_parse(args):
    cell = [c for c in targets.MATRICES[args.matrix] if c.name == args.cell]
    if not cell:
        raise log.StepError('no cell %s in matrix %s' % (args.cell, args.matrix))
    with open(args.log, errors='replace') as f:
        lines = [l.rstrip('\n') for l in f]
    out = results.analyze(lines, cell[0])
    rec = dict(out, cell=args.cell, suites=list(cell[0].suites),
               kasan=cell[0].kasan, log=args.log)
    matrix.print_table([rec])
    c = matrix.counts([rec])
    print('%d passed, %d failed, %d skipped' % (c['pass'], c['fail'], c['skip'] + c['xfail']))
    return 1 if c['fail'] else 0


def cmd_export(args):
    names = source.export_series(args.branch)
    log.info('exported %d patches to %s/: %s' % (
        len(names), os.path.relpath(paths.PATCHES, paths.REPO), ' '.join(names)))
    return done()


def cmd_signoff(args):
    names = identity.sign_series(args.identity, dry_run=args.dry_run)
    log.info('%s %d patches as %s: %s' % (
        'would sign' if args.dry_run else 'signed', len(names), args.identity,
        ' '.join(names) or '(none changed)'))
    return done()


def cmd_backport_messages(args):
    out = backport.fill_series(args.linux_git, paths.PATCHES, dry_run=args.dry_run)
    for name, cid, changed in out:
        log.info('%s %s: commit %s (%s)' % (
            'would fill' if args.dry_run and changed else 'filled' if changed else 'as is',
            name, cid[:12], 'from ' + args.linux_git))
    log.info('%d backports in %s, %d %s' % (
        len(out), os.path.relpath(paths.PATCHES, paths.REPO), sum(c for _, _, c in out),
        'would change' if args.dry_run else 'changed'))
    return done()


def bench_results_line(name):
    """Where make bench wrote its results, under this base's results
    directory (build/6.1/results/bench/ on BASE=6.1)."""
    where = os.path.relpath(os.path.join(paths.RESULTS, 'bench', name), paths.REPO)
    return 'Results: %s.json, %s.md%s' % (where, name,
                                          ' and results.png' if name == 'results' else '')


def cmd_bench(args):
    setup_host()
    plan_name = args.plan or ('quick' if args.quick else 'full')
    result, table = bench.run(apply=args.apply, plan_name=plan_name)
    name = bench.PLANS[plan_name].get('output', 'results')
    why = bench_plot() if name == 'results' else None
    if bench.PLANS[plan_name].get('attrib_only'):
        attrib_docs_section(name, table)
    print('\n' + table)
    print(bench_results_line(name))
    for p in result['problems'] + ([why] if why else []):
        print('error: ' + p, file=sys.stderr)
    log.summary()
    return 1 if result['problems'] or why else 0


def cmd_attrib_table(args):
    """The attribution table of a PLAN=attrib or PLAN=attrib-gki run again,
    from the profiles its JSON kept, with today's causes; into its .md and
    docs/benchmarks.md, as make bench writes them."""
    name = args.plan
    path = args.json or os.path.join(paths.RESULTS, 'bench', name + '.json')
    if not os.path.exists(path):
        raise log.StepError('%s: no such file (make bench PLAN=%s writes it)'
                            % (os.path.relpath(path, paths.REPO), name))
    with open(path) as f:
        result = json.load(f)
    table = kasancost.markdown(bench.attrib_rows_from_result(result), result=result)
    with open(os.path.splitext(path)[0] + '.md', 'w') as f:
        f.write(table)
    attrib_docs_section(name, table)
    print(table)
    return 0


def cmd_plugin_compare(args):
    """The QEMU contrib plugin of patches/qemu against the project's own:
    the posting's test on its bare-metal guest (also under kmt-count), and
    the same kernel boots under both, every count compared
    (patches/qemu/test: run-guest.sh, boot-compare.sh)."""
    from . import plugin
    setup_host()
    ref = plugin.build()
    mte = plugin.build_contrib()
    for tree in ('base', 'series'):
        image = os.path.join(build.out_dir('lean', tree), 'arch', 'arm64', 'boot', 'Image')
        if not os.path.exists(image):
            raise log.StepError('%s is missing: the lean kernels of make check or make bench '
                                'first' % os.path.relpath(image, paths.REPO))
    if not os.path.exists(os.path.join(build.out_dir('lean', 'series'), 'initramfs.cpio.gz')):
        raise log.StepError('no initramfs of the lean series kernel: make bench first')
    out = os.path.join(paths.LOGS, 'plugin-compare')
    os.makedirs(out, exist_ok=True)
    test = os.path.join(plugin.CONTRIB_DIR, 'test')
    with log.phase('the contrib plugin on its test guest, and kmt-count on the same guest'):
        log.run(['sh', os.path.join(test, 'run-guest.sh'), mte, ref],
                logfile=os.path.join(out, 'run-guest.log'))
    with log.phase('kernel boots under both plugins, every count compared (log %s)'
                   % os.path.relpath(out, paths.REPO)):
        log.run(['sh', os.path.join(test, 'boot-compare.sh'), mte, out], cwd=paths.REPO,
                logfile=os.path.join(out, 'boot-compare.log'))
    return done()


def attrib_docs_section(name, table):
    """docs/benchmarks.md holds a PLAN=attrib table (attrib, attrib-gki;
    with -7.3 or -6.1 for another base) where it has the section."""
    marker = name + ('' if paths.BASE_NAME == bases.DEFAULT else '-' + paths.BASE_NAME)
    if docs.read_section(marker) is not None:
        replace_readme_section(marker, table)


def cmd_compare(args):
    if args.measure:
        compare.measure(args.plan)
    table = compare.markdown(compare.load())
    out = os.path.join(paths.BUILD, 'results', 'compare.md')
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, 'w') as f:
        f.write(table)
    print(table)
    replace_readme_section('side-by-side', table)
    log.info('wrote %s' % os.path.relpath(out, paths.REPO))
    return done()


def bench_marker(base_name=None):
    """The docs section that make cover fills with make bench's table:
    'bench' for the default base, 'bench-NAME' for another one (whose
    figures must not replace the default base's)."""
    base_name = base_name or paths.BASE_NAME
    return 'bench' if base_name == bases.DEFAULT else 'bench-%s' % base_name


def cmd_cover(args):
    if paths.BASE.cover_results == 'check':
        return write_check_cover()
    res_json = os.path.join(paths.RESULTS, 'bench', args.results + '.json')
    if not os.path.exists(res_json):
        raise log.StepError('no %s: run make bench%s first' % (
            res_json, '' if args.results == 'results' else ' PLAN=' + args.results))
    md = os.path.join(paths.RESULTS, 'bench', args.results + '.md')
    with open(res_json) as f:
        table = bench.markdown_table(json.load(f))
    with open(md, 'w') as f:
        f.write(table)
    out = coverletter.write_cover_letter(
        os.path.join(paths.REPO, 'docs', paths.BASE.cover_template), md,
        config_symbols=provenance.kconfig_symbols(source.BRANCH))
    log.info('wrote %s' % os.path.relpath(out, paths.REPO))
    if args.results != 'results':
        # A partial run fills the cover letter, not the README's table of
        # every benchmark.
        return done()
    replace_readme_section(bench_marker(), table)
    if paths.BASE_NAME != bases.DEFAULT:
        return done()
    # make bench PLAN=refcount's own table (part 3), when it ran.
    rc_json = os.path.join(paths.RESULTS, 'bench', 'refcount.json')
    if os.path.exists(rc_json):
        with open(rc_json) as f:
            replace_readme_section('refcount', refbench.markdown_table(json.load(f)['records']))
    shapes = os.path.join(paths.RESULTS, 'bench', 'shapes.json')
    if os.path.exists(shapes):
        with open(shapes) as f:
            replace_readme_section('shapes', bench.markdown_table(json.load(f)))
    return done()


def cmd_series_check(args):
    gates = args.gate or (series.ALL_GATES if args.all else series.QUICK_GATES)
    setup_host(sum((series.GATE_PACKAGES.get(g, ()) for g in gates), ()))
    tree_with_series(args)
    if args.prefix and 'bisect-kunit' not in gates:
        raise log.StepError('--prefix is for the bisect-kunit gate, which this run does not '
                            'include (--gate bisect-kunit)')
    records = series.run(gates, args.prefix)
    matrix.print_table(records)
    log.summary()
    c = matrix.counts(records)
    print('%d passed, %d failed' % (c['pass'], c['fail']))
    return 1 if c['fail'] else 0


def print_bench_figures(recs, checks):
    for r in recs:
        print('%s %s %s: %s %s' % (r['benchmark'], r['kernel'], r['kasan'],
                                   r['metric'], r['value']))
    for t in checks:
        print('  ' + t)


def cmd_lava_run(args):
    if args.boot:
        recs, checks, path = lavarun.run_bench(args.boot)
        print_bench_figures(recs, ())
        print('%s through lava-run: %d figures; %s' % (
            args.boot, len(recs), 'LAVA\'s measurements equal the console\'s'
            if not checks else 'DISAGREES or failed:'))
        for t in checks:
            print('  ' + t)
        print('Results: %s' % os.path.relpath(path, paths.REPO))
        return 1 if checks or not recs else 0
    failed = 0
    mx = 'check-all' if args.all else 'check'
    for cell in args.cell or ['sync']:
        record, checks = (lavarun.evaluate(cell, mx) if args.no_boot else lavarun.run(cell, mx))
        problems = [p['text'] for p in record['problems']]
        c = matrix.counts([record])
        print('%s through lava-run: %d passed, %d failed (with problems), %d skipped; %s' % (
            cell, c['pass'], c['fail'], c['skip'],
            'agrees with the direct run and with LAVA\'s own results'
            if not checks and not problems else 'DISAGREES or failed:'))
        for t in problems + checks:
            print('  ' + t)
        failed += bool(checks or problems)
    print('Results: %s' % os.path.relpath(os.path.join(paths.RESULTS, 'lava-run'), paths.REPO))
    return 1 if failed else 0


def cmd_lava_import(args):
    if args.boot:
        recs, checks, path = lavarun.lab_import_bench(args.log, args.boot, args.lab,
                                                      args.device, args.job)
        print_bench_figures(recs, checks)
        print('Results: %s, lab_records of results/bench/results.json'
              % os.path.relpath(path, paths.REPO))
        return 1 if checks or not recs else 0
    if len(args.cell or ()) != 1:
        raise log.StepError('lava-import: name the job\'s cell with one --cell')
    mx = 'check-all' if args.all else 'check'
    record, checks, path = lavarun.lab_import(args.log, args.cell[0], args.lab,
                                              args.device, args.job, mx)
    c = matrix.counts([record])
    print('%s: %d passed, %d failed (with problems), %d skipped' % (
        record['where'], c['pass'], c['fail'], c['skip']))
    for t in [p['text'] for p in record['problems']] + checks:
        print('  ' + t)
    print('Results: %s, lab_cells of results/%s.json' % (os.path.relpath(path, paths.REPO), mx))
    return 1 if c['fail'] else 0


def cmd_lava(args):
    if args.bench:
        out = os.path.join(paths.BUILD, 'lava', 'bench-' + args.bench + (
            '' if args.device == 'qemu' else '-' + args.device))
        files = lava.export_bench(args.bench, out, args.url_base, args.device,
                                  args.firmware_url, args.device_type_name)
    else:
        name = 'check-all' if args.all else 'check'
        out = os.path.join(paths.BUILD, 'lava', name + (
            '' if args.device == 'qemu' else '-' + args.device))
        files = lava.export(name, out, args.url_base, args.device, args.cell,
                            args.firmware_url, args.device_type_name)
    log.info('%d LAVA job(s), each validated by lava_common.schemas, in %s'
             % (len(files), os.path.relpath(out, paths.REPO)))
    return done()


def cmd_cells(args):
    # check-all is check plus more: each cell is listed once, under the
    # first matrix that has it.
    seen = set()
    for name, cells in targets.MATRICES.items():
        for c in cells:
            if c in seen:
                continue
            seen.add(c)
            print('%-9s %-26s config=%-24s machine=%-9s kasan=%-7s suites=%s' % (
                name, c.name, c.config, c.machine, c.kasan, ','.join(c.suites)))
    return done()


def cmd_kunitpy(args):
    setup_host()
    tree_with_series(args)
    rec = kunitpy.record(kunitpy.last_check_records())
    matrix.print_table([rec])
    log.summary()
    c = matrix.counts([rec])
    print('%d passed, %d failed' % (c['pass'], c['fail']))
    return 1 if c['fail'] else 0


def cmd_othersuites(args):
    if args.action == 'readme':
        data = othersuites.last()
        if not data:
            raise log.StepError('no run of the other suites to show (build/results/%s.json): '
                                'python3 -m kmt othersuites first' % othersuites.NAME)
        replace_readme_section('other-suites-%s' % data['base'], othersuites.markdown(data))
        return 0
    setup_host()
    tree_with_series(args)
    rec = othersuites.record()
    matrix.print_table([rec])
    log.summary()
    c = matrix.counts([rec])
    print('%d passed, %d failed' % (c['pass'], c['fail']))
    return 1 if c['fail'] else 0


def cmd_shell(args):
    from . import shell  # pylint: disable=import-outside-toplevel
    setup_host()
    return shell.run(args.cell_name, gdb=args.gdb, suites=args.suites, apply=args.apply)


def done():
    """The end of a command that prints no verdict of its own: the phase
    durations, and success."""
    log.summary()
    return 0


def build_parser():
    """The command line: one subparser per command, each naming the
    function that runs it (func)."""
    ap = argparse.ArgumentParser(prog='kmt', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--dry-run', action='store_true', help='print the commands only')
    ap.add_argument('--no-apply', dest='apply', action='store_false',
                    default=os.environ.get('APPLY', '1') != '0',
                    help='build the kernel tree as it is checked out')
    ap.add_argument('--cell', action='append', help='run only this cell (repeatable)')
    sub = ap.add_subparsers(dest='cmd', required=True)

    def command(name, func, **kw):
        p = sub.add_parser(name, **kw)
        p.set_defaults(func=func)
        return p
    p = command('check', cmd_check)
    p.add_argument('--all', action='store_true',
                   help='also the KASAN sw_tags, KCSAN and clang configurations')
    command('run', cmd_run)
    command('setup', cmd_setup)
    command('prepare', cmd_prepare)
    p = command('build', cmd_build)
    p.add_argument('config', choices=sorted(targets.CONFIGS))
    p = command('parse', cmd_parse)
    p.add_argument('log')
    p.add_argument('cell')
    p.add_argument('--matrix', default='check')
    p = command('export', cmd_export)
    p.add_argument('branch')
    p = command('signoff', cmd_signoff)
    p.add_argument('identity', help='"Full Name <user@example.com>"')
    p = command('backport-messages', cmd_backport_messages,
                help="each backport's message from the upstream commit in a mainline clone")
    p.add_argument('linux_git', metavar='LINUX_GIT', help='a clone of mainline with the '
                   'commits the series backports')
    command('cells', cmd_cells)
    p = command('postings', cmd_postings,
                help='the series as the postings its maintainers apply')
    p.add_argument('action', choices=('write', 'check', 'prove', 'measure', 'list', 'readme'))
    p.add_argument('names', nargs='*', help='postings (default: all of postings.toml)')
    p.add_argument('--static', action='store_true',
                   help='check: only what needs no kernel tree (headers, tags, cover)')
    p.add_argument('--rescore', action='store_true',
                   help='prove: judge the kunit.py proofs of the last run again from the '
                        'JSON they kept, running nothing')
    p.add_argument('--runner', action='append', choices=('cell', 'kunit.py'),
                   help='prove: only the proofs of this runner (repeatable); the '
                        'others keep their last results')
    p = command('reverts', cmd_reverts, help="each change reverted: its tests must fail")
    p.add_argument('action', choices=('run', 'list', 'readme'))
    p.add_argument('changes', nargs='*', help='entries of reverts.toml (part of the subject)')
    p = command('lava-run', cmd_lava_run)
    p.add_argument('--all', action='store_true', help='a cell of the ALL=1 matrix')
    p.add_argument('--boot', help="instead of a cell: one boot of make bench's QUICK plan "
                                  "(e.g. bench-patched-sync-icount)")
    p.add_argument('--no-boot', action='store_true',
                   help="read the cell's last lava-run log back, without running it again")
    p = command('lava-import', cmd_lava_import)
    p.add_argument('log', help="the job's log, e.g. from lavacli jobs logs ID --raw")
    p.add_argument('--boot', help='a benchmark job: its boot (bench-<kernel>-<mode>-<tag>, '
                                  'the job name without "kmt ")')
    p.add_argument('--lab', required=True, help='the lab that ran it')
    p.add_argument('--device', required=True, help='the device (type) it ran on')
    p.add_argument('--job', required=True, help="the lab's job id")
    p.add_argument('--all', action='store_true', help='a cell of the ALL=1 matrix')
    p = command('lava', cmd_lava)
    p.add_argument('--all', action='store_true', help='the ALL=1 matrix')
    p.add_argument('--bench', choices=sorted(bench.PLANS),
                   help="instead of the matrix: one job per boot of make bench's plan "
                        "(e.g. quick, full)")
    p.add_argument('--url-base', help='where a lab downloads the images (default: file://)')
    p.add_argument('--device', default='qemu', choices=lava.DEVICE_TYPES,
                   help='qemu (default), or a lab template: fvp (FVP Base RevC with MTE), '
                        'u-boot (a board with MTE booted over TFTP)')
    p.add_argument('--firmware-url', help='fvp: where bl1.bin, fip.bin and '
                                          'fvp-base-revc.dtb are; u-boot: board.dtb')
    p.add_argument('--device-type-name', help="the lab's name of the device type")
    p = command('series-check', cmd_series_check)
    p.add_argument('--all', action='store_true', help='every gate, bisect and configs too')
    p.add_argument('--gate', action='append', choices=series.ALL_GATES)
    p.add_argument('--prefix', action='append', type=int,
                   help='bisect-kunit: only this prefix of the series (1-based, repeatable)')
    p = command('cover', cmd_cover)
    p.add_argument('--from', dest='results', default=os.environ.get('FROM') or 'results',
                   help='the make bench results to quote: results (default: the full or '
                        'PLAN=counts run) or entry (PLAN=entry)')
    command('kunitpy', cmd_kunitpy,
            help="the series' KUnit suites through the kernel's kunit.py, compared case by "
                 "case with the last make check's cells")
    p = command('othersuites', cmd_othersuites,
                help="slub's, kfence's and the lib KUnit suites under KASAN HW_TAGS, in each "
                     "mode (kasan=off, sync, async, asymm)")
    p.add_argument('action', nargs='?', choices=('run', 'readme'), default='run')
    p = command('shell', cmd_shell, help="boot a cell's kernel with a shell on the console")
    p.add_argument('cell_name', metavar='CELL', nargs='?', default='sync')
    p.add_argument('--gdb', action='store_true', help='QEMU gdb stub on :1234, halted at start')
    p.add_argument('--suites', action='store_true', help="run the cell's suites first")
    p = command('attrib-table', cmd_attrib_table,
                help="a PLAN=attrib run's table again from the profiles its JSON kept")
    p.add_argument('plan', nargs='?', default='attrib-gki', choices=('attrib', 'attrib-gki'))
    p.add_argument('--json', help='the results file (default: the plan\'s, under build/)')
    command('plugin-compare', cmd_plugin_compare,
            help="the QEMU contrib plugin posting's counts against the project's plugin")
    p = command('compare', cmd_compare)
    p.add_argument('--measure', action='store_true',
                   help='first run make bench of every base, in one run')
    p.add_argument('--plan', choices=sorted(bench.PLANS), default='quick',
                   help='the bench plan of --measure (default quick)')
    p = command('bench', cmd_bench)
    p.add_argument('--quick', action='store_true',
                   default=os.environ.get('QUICK', '0') not in ('', '0'))
    p.add_argument('--plan', choices=sorted(bench.PLANS),
                   help='full (default), quick (= --quick), counts (full without '
                        'wall-time pairs and part 3), entry (counts of the system call '
                        'and context switch rows), shapes (upstream sizes), refcount, '
                        'or attrib / attrib-gki (KASAN over kasan=off by cause)')
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.dry_run and args.cmd not in DRY_RUN_COMMANDS:
        print('error: --dry-run (DRY_RUN=1) is supported by %s only: %s would have to '
              'run its steps to get to the next one (git, builds, boots)'
              % (', '.join(sorted(DRY_RUN_COMMANDS)), args.cmd), file=sys.stderr)
        return 2
    # On SIGTERM, unwind like on ^C so that cleanups (e.g. checking the
    # kernel tree's branch out again after a baseline build) still run.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.func(args)
    except log.StepError as e:
        log.summary()
        print('\nerror: %s' % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print('\ninterrupted', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
