"""make lava-run: one matrix cell through LAVA's own dispatcher, here.

Debian's lava-dispatcher (2023.01 in bookworm) runs the job that make
lava exports for the cell, against a QEMU device rendered from
lava-server's qemu device-type template, as a lab would. The packages are
not installed: lava-dispatcher depends on systemd-sysv and python3-guestfs,
which a build host does not want. They are downloaded with apt-get
download and unpacked under build/lava-dispatcher/, with the few Python
modules Debian's python3 lacks, and a stand-in for guestfs (imported at
load time, never used by a tmpfs deploy). lava-run must run as root.

What LAVA records (its results, and the console log it keeps) comes back
as a record of the same shape as a local run's, marked with where it ran:
the console is parsed by kmt as a local log is (LAVA's monitors cannot
report skips), LAVA's own pass/fail results are checked against that
parse, and the whole pass/fail/skip set against the cell's last direct
run (results/<matrix>.json).
"""

import json
import os
import re
import shutil

from . import bench, bootspec, build, labresults, lava, log, paths, results, targets

# lava-run and what Debian's python3 lacks to run it (the rest, e.g.
# jinja2, yaml, requests, voluptuous and lava-common, make setup installs).
PACKAGES = ('lava-dispatcher', 'lava-dispatcher-host', 'python3-pexpect',
            'python3-ptyprocess', 'python3-setproctitle', 'python3-netifaces',
            'python3-magic', 'python3-configobj', 'python3-pyudev')
# The device-type templates (usr/share/lava-server/device-types/).
SERVER_PACKAGE = 'lava-server'
DEBIAN_PYTHON = '/usr/bin/python3'
DEVICE_TEMPLATE = os.path.join(paths.REPO, 'lava', 'kmt-qemu.jinja2')
GUESTFS_STUB = '''# Stand-in for python3-guestfs: lava_dispatcher imports it at load time,
# only image and overlay deploys use it (a tmpfs kernel + initrd job never).
class GuestFS:
    def __init__(self, *args, **kwargs):
        raise RuntimeError('guestfs is not installed (make lava-run)')
'''


def root():
    return os.path.join(paths.BUILD, 'lava-dispatcher')


def pythonpath():
    return ':'.join([os.path.join(root(), 'shim'),
                     os.path.join(root(), 'root', 'usr', 'lib', 'python3', 'dist-packages')])


def templates_dir():
    return os.path.join(root(), 'server', 'usr', 'share', 'lava-server', 'device-types')


def setup(logfile):
    """Download and unpack lava-dispatcher and what it needs (once)."""
    stamp = os.path.join(root(), '.kmt-unpacked')
    want = ' '.join(PACKAGES + (SERVER_PACKAGE,))
    if os.path.exists(stamp) and open(stamp).read() == want:
        log.info('lava-dispatcher unpacked in %s' % os.path.relpath(root(), paths.REPO))
        return
    debs = os.path.join(root(), 'debs')
    for d in (root(), debs):
        os.makedirs(d, exist_ok=True)
    log.run(['apt-get', 'download'] + list(PACKAGES) + [SERVER_PACKAGE],
            logfile=logfile, cwd=debs)
    for deb in sorted(os.listdir(debs)):
        dest = 'server' if deb.startswith(SERVER_PACKAGE + '_') else 'root'
        log.run(['dpkg-deb', '-x', os.path.join(debs, deb), os.path.join(root(), dest)],
                logfile=logfile, quiet=True)
    os.makedirs(os.path.join(root(), 'shim'), exist_ok=True)
    with open(os.path.join(root(), 'shim', 'guestfs.py'), 'w') as f:
        f.write(GUESTFS_STUB)
    if not os.path.exists(os.path.join(templates_dir(), 'qemu.jinja2')):
        raise log.StepError('%s has no qemu.jinja2 in usr/share/lava-server/device-types'
                            % SERVER_PACKAGE)
    with open(stamp, 'w') as f:
        f.write(want)


def dispatcher_config(tmp_dir):
    """lava-run's dispatcher configuration: a fixed IP (no default-route
    lookup) and an absolute prefix, so that the job's temporary directory
    (/var/lib/lava/dispatcher/tmp/<prefix><job id>) lands in tmp_dir."""
    return 'dispatcher_ip: 127.0.0.1\nprefix: %s/\n' % tmp_dir.rstrip('/')


def render_device(context):
    """The device configuration, rendered as lava-server renders it: the
    device dictionary (extending qemu.jinja2) with the job's context."""
    jinja2 = lava.debian_module('jinja2')
    sandbox = lava.debian_module('jinja2.sandbox')
    env = sandbox.SandboxedEnvironment(
        loader=jinja2.FileSystemLoader([os.path.dirname(DEVICE_TEMPLATE), templates_dir()]),
        autoescape=False, trim_blocks=True)
    return env.get_template(os.path.basename(DEVICE_TEMPLATE)).render(**context)


def read_output(lines):
    """A LAVA job log (one {dt, lvl, msg} mapping per line: lava-run's
    output here, or a lab's log.yaml, whose lines are items of a YAML list,
    '- {...}') as (LAVA's results, the console lines)."""
    found, console = [], []
    for line in lines:
        line = line.strip()
        if line.startswith('- {'):
            line = line[2:]
        if not line.startswith('{'):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            yaml = lava.debian_module('yaml')
            try:
                entry = yaml.safe_load(line)
            except yaml.YAMLError:
                continue
        if not isinstance(entry, dict):
            continue
        if entry.get('lvl') == 'results' and isinstance(entry.get('msg'), dict):
            found.append(entry['msg'])
        elif entry.get('lvl') in ('target', 'feedback'):
            console.append(str(entry.get('msg', '')))
    return found, console


def lava_verdict(found):
    """LAVA's own verdict of the job ('pass', 'fail' or None)."""
    for r in found:
        if r.get('definition') == 'lava' and r.get('case') == 'job':
            return r.get('result')
    return None


def monitor_mismatches(found, record, cell):
    """LAVA's own monitor results that disagree with kmt's reading of the
    same console: [text]."""
    kunit = [s for s in cell.suites if targets.SUITES[s].kind == 'kunit']
    status = {(t['suite'], t['name']): t['status'] for t in record['tests']}
    out = []
    for r in found:
        if r.get('definition') == 'lava':
            continue
        suite = r['definition']
        if suite == 'kunit':
            if len(kunit) != 1:
                continue
            suite = kunit[0]
        name = (r.get('extra') or {}).get('test_case_id', r.get('case'))
        want = {'pass': results.PASS, 'fail': results.FAIL}.get(r.get('result'))
        got = status.get((suite, name))
        if got == results.XFAIL:
            got = results.FAIL
        if got != want:
            out.append('%s/%s: LAVA says %s, its console says %s'
                       % (suite, name, r.get('result'), got or 'nothing'))
    return out


def outcome_set(record):
    """{(suite, test): status} of a record, expected failures as failures."""
    return {(t['suite'], t['name']): t['status'] for t in record['tests']}


def differences(lava_record, direct_record):
    """Where the run through LAVA and the direct run disagree: [text]."""
    a, b = outcome_set(lava_record), outcome_set(direct_record)
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            out.append('%s/%s: %s through LAVA, %s directly'
                       % (key[0], key[1], a.get(key, 'absent'), b.get(key, 'absent')))
    return out


def direct_record(matrix, cell_name):
    path = os.path.join(paths.RESULTS, '%s.json' % matrix)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    return next((r for r in data.get('cells', []) if r.get('cell') == cell_name), None)


def _cell(cell_name, matrix):
    cell = next((c for c in targets.MATRICES[matrix] if c.name == cell_name), None)
    if cell is None:
        raise log.StepError('no cell %s in matrix %s' % (cell_name, matrix))
    return cell


def output_log(cell_name):
    return os.path.join(paths.LOGS, 'lava-run', '%s-output.yaml' % cell_name)


def run(cell_name, matrix='check'):
    """Run the cell's job through lava-run; returns (record, checks)."""
    cell = _cell(cell_name, matrix)
    out = build.out_dir(cell.config)
    image = os.path.join(out, 'arch', paths.ARCH, 'boot', 'Image')
    initrd = os.path.join(out, 'initramfs.cpio.gz')
    for p in (image, initrd):
        if not os.path.exists(p):
            raise log.StepError('%s is missing: build the cell first (python3 -m kmt --cell %s '
                                'check)' % (os.path.relpath(p, paths.REPO), cell_name))
    rc = run_job(cell_name, lambda img, rd: bootspec.for_cell(cell, img, rd), image, initrd)
    return evaluate(cell_name, matrix, rc)


def run_job(name, make_spec, image, initrd):
    """Run one boot's job through lava-run (its log: output_log(name));
    make_spec(image, initrd) describes the boot with the job's own copies
    of the images. Returns lava-run's exit code."""
    if os.geteuid() != 0:
        raise log.StepError('lava-run refuses to run as a user other than root')
    logdir = os.path.join(paths.LOGS, 'lava-run')
    with log.phase('lava-dispatcher (download and unpack, once)'):
        setup(os.path.join(logdir, 'setup.log'))
    job_dir = os.path.join(root(), 'jobs', name)
    out_dir = os.path.join(job_dir, 'out')
    shutil.rmtree(job_dir, ignore_errors=True)
    os.makedirs(os.path.join(job_dir, 'images'))
    os.makedirs(out_dir)
    os.makedirs(os.path.join(job_dir, 'tmp'))
    # Copies: a later build must not change the images under a running job.
    local = {}
    for p in (image, initrd):
        local[p] = os.path.join(job_dir, 'images', os.path.basename(p))
        shutil.copyfile(p, local[p])
    spec = make_spec(local[image], local[initrd])
    job = lava.job(spec, 'file://' + local[image], 'file://' + local[initrd])
    lava.validate(job)
    job_file = os.path.join(job_dir, 'job.yaml')
    lava.write(job_file, job)
    device_file = os.path.join(job_dir, 'device.yaml')
    with open(device_file, 'w') as f:
        f.write(render_device(job['context']))
    dispatcher_file = os.path.join(job_dir, 'dispatcher.yaml')
    with open(dispatcher_file, 'w') as f:
        f.write(dispatcher_config(os.path.join(job_dir, 'tmp')))
    output = output_log(name)
    if os.path.exists(output):
        os.remove(output)
    timeout = 60 * job['timeouts']['job']['minutes']
    with log.phase('lava-run %s (job %s, device %s)' % (
            name, os.path.relpath(job_file, paths.REPO),
            os.path.relpath(device_file, paths.REPO))):
        rc = log.run([DEBIAN_PYTHON, os.path.join(root(), 'root', 'usr', 'bin', 'lava-run'),
                      '--job-id', name, '--output-dir', out_dir,
                      '--device', device_file, '--dispatcher', dispatcher_file, job_file],
                     logfile=output, env={'PYTHONPATH': pythonpath()}, check=False,
                     timeout=timeout)
    return rc


def run_bench(boot, plan_name='quick'):
    """One exported benchmark boot (by name, e.g. bench-patched-sync-icount)
    through lava-run here, read back as a lab's would be (where: this host):
    (records, checks, path)."""
    images = bench.built_images(bench.PLANS[plan_name].get('config', 'lean'))
    boots = {s.name: s for _, _, _, s in bench.plan_boots(plan_name, images)}
    if boot not in boots:
        raise log.StepError('no boot %s in make bench\'s %s plan (%s)'
                            % (boot, plan_name, ', '.join(boots)))
    spec = boots[boot]
    for p in (spec.image, spec.initrd):
        if not os.path.exists(p):
            raise log.StepError('%s is missing: build the benchmark kernels first (make bench '
                                'QUICK=1)' % os.path.relpath(p, paths.REPO))
    rc = run_job(boot, lambda img, rd: spec.replace(image=img, initrd=rd),
                 spec.image, spec.initrd)
    recs, checks, path = lab_import_bench(output_log(boot), boot, 'this host',
                                          'lava-run %s, qemu' % dispatcher_version(), 'local',
                                          keep=False)
    if rc != 0:
        checks.append('lava-run exit code %d (log: %s)'
                      % (rc, os.path.relpath(output_log(boot), paths.REPO)))
    return recs, checks, path


def evaluate(cell_name, matrix='check', rc=0):
    """Read the cell's last lava-run log back: (record, checks), also
    written to results/lava-run/<cell>.json."""
    cell = _cell(cell_name, matrix)
    output = output_log(cell_name)
    if not os.path.exists(output):
        raise log.StepError('no lava-run log of %s (%s): run make lava-run CELL=%s'
                            % (cell_name, os.path.relpath(output, paths.REPO), cell_name))
    logdir = os.path.dirname(output)
    console_log = os.path.join(logdir, '%s-console.log' % cell_name)
    record, checks = read_job(cell, matrix, output, console_log, rc,
                              where='lava-run (lava-dispatcher %s, this host)'
                              % dispatcher_version())
    results.write_json(os.path.join(paths.RESULTS, 'lava-run', '%s.json' % cell_name),
                       {'record': record, 'checks': checks})
    return record, checks


def read_job(cell, matrix, job_log, console_log, rc=0, where='-', **extra):
    """A LAVA job's log as (record, checks): its console parsed as a local
    run's (kept in console_log), LAVA's verdict and own results checked,
    the outcomes compared with the cell's last direct run."""
    output = job_log
    with open(output, errors='replace') as f:
        found, console = read_output(f)
    with open(console_log, 'w') as f:
        f.write('\n'.join(console) + '\n')
    analysis = results.analyze(console, cell)
    problems = list(analysis['problems'])
    problems += results.apply_expectations(cell.name, analysis['tests'],
                                           results.load_expectations())
    verdict = lava_verdict(found)
    if rc != 0 or verdict != 'pass':
        problems.append(results.problem('lava', 'lava-run exit code %d, job result %s (log: %s)'
                                        % (rc, verdict, os.path.relpath(output, paths.REPO))))
    record = results.record(
        cell.name, cell.suites, cell.kasan, analysis['tests'], problems,
        os.path.relpath(console_log, paths.REPO), matrix=matrix, config=cell.config,
        machine=cell.machine, cpu=targets.MACHINES[cell.machine].cpu, where=where,
        lava_results=len([r for r in found if r.get('definition') != 'lava']), **extra)
    checks = ['LAVA vs console: %s' % m for m in monitor_mismatches(found, record, cell)]
    direct = direct_record(matrix, cell.name)
    if direct is None:
        checks.append('no direct run of %s in results/%s.json to compare with'
                      % (cell.name, matrix))
    else:
        checks += ['LAVA vs direct run: %s' % d for d in differences(record, direct)]
    return record, checks


# ---- results back from a lab ------------------------------------------------------


def lab_import(job_log, cell_name, lab, device, job_id, matrix='check'):
    """A lab's LAVA job (its log, as `lavacli jobs logs ID --raw` saves it)
    of one exported cell: (record, checks, path). The record names the lab,
    the device and the job; it is kept in results/lab/<matrix>/ and shown
    beside the local cells in results/<matrix>.json (lab_cells) and in
    its table, never counted in a local run's totals."""
    cell = _cell(cell_name, matrix)
    if not os.path.exists(job_log):
        raise log.StepError('no such job log: %s' % job_log)
    name = '%s@%s-%s' % (cell.name, labresults.slug(lab), labresults.slug(str(job_id)))
    os.makedirs(labresults.lab_dir(matrix), exist_ok=True)
    console_log = os.path.join(labresults.lab_dir(matrix), name + '-console.log')
    record, checks = read_job(cell, matrix, job_log, console_log,
                              where='LAVA lab %s, device %s, job %s' % (lab, device, job_id),
                              lab=lab, device=device, job=str(job_id))
    path = os.path.join(labresults.lab_dir(matrix), name + '.json')
    results.write_json(path, {'record': record, 'checks': checks})
    labresults.merge_lab_cells(matrix)
    return record, checks, path


_BENCH_BOOT = re.compile(r'^bench-(baseline|patched)-(\w+)-(\S+)$')


def lab_import_bench(job_log, boot, lab, device, job_id, keep=True):
    """A lab's run of one exported benchmark boot (make lava BENCH=1; boot:
    its job's name without 'kmt ', e.g. bench-patched-sync-icount): the
    figures of its console as bench records naming the lab, the device and
    the job, checked against LAVA's own measurements; kept in
    results/lab/bench/ and listed in results/bench/results.json
    (lab_records). Returns (records, checks, path)."""
    m = _BENCH_BOOT.match(boot)
    if not m:
        raise log.StepError('%s is not the name of a benchmark boot (bench-<kernel>-<mode>-<tag>, '
                            'as make lava BENCH=1 names the jobs)' % boot)
    kernel, mode, tag = m.groups()
    if not os.path.exists(job_log):
        raise log.StepError('no such job log: %s' % job_log)
    with open(job_log, errors='replace') as f:
        found, console = read_output(f)
    parsed = bench.parse_bench([l.strip() for l in console])
    metric = 'insn_per_op' if tag.endswith('icount') else 'ns_per_op'
    where = 'LAVA lab %s, device %s, job %s' % (lab, device, job_id)
    records, checks = [], []
    lava_says = {r.get('case'): r for r in found if r.get('definition') == 'kmt-bench'}
    for b, v in parsed.items():
        if metric not in v:
            checks.append('%s: no %s in the console' % (b, metric))
            continue
        records.append({'benchmark': b, 'metric': metric, 'kernel': kernel, 'kasan': mode,
                        'cpu': device, 'value': v[metric], 'ops': v.get('ops'),
                        'boot': boot, 'where': where, 'lab': lab, 'device': device,
                        'job': str(job_id)})
        said = lava_says.get(b.lower())
        if said is None:
            checks.append('%s: LAVA reported no measurement' % b)
        elif abs(float(said.get('measurement', 'nan')) - v[metric]) > 1e-6 * max(1, v[metric]):
            checks.append('%s: LAVA measured %s, the console says %s'
                          % (b, said.get('measurement'), v[metric]))
    if not keep:
        # A run here through lava-run proves the job, it is no lab figure.
        path = os.path.join(paths.RESULTS, 'lava-run', '%s.json' % boot)
        results.write_json(path, {'records': records, 'checks': checks})
        return records, checks, path
    d = os.path.join(paths.RESULTS, 'lab', 'bench')
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, '%s@%s-%s.json' % (boot, labresults.slug(lab),
                                               labresults.slug(str(job_id))))
    results.write_json(path, {'records': records, 'checks': checks})
    labresults.merge_lab_bench()
    return records, checks, path


def dispatcher_version():
    base = os.path.join(root(), 'debs')
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else ():
        if d.startswith('lava-dispatcher_'):
            return d.split('_')[1]
    return '?'
