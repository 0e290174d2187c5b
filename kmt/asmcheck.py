"""The asm gate: the series' atomics compiled where a branch can miss.

A conditional branch (b.cond, cbz, cbnz, tbz, tbnz) reaches +-1 MiB
(tbz/tbnz +-32 KiB). Code put in `.subsection 1` is emitted after all of
its translation unit's .text, so a conditional branch between it and its
function misses once more than 1 MiB of text lies between them: GCC's
assembler refuses it ("conditional branch out of range"), clang-19
reports "fixup value out of range", and clang 14 assembles it silently
to a wrong target. Such code also lies outside every function symbol, so
a PC in it symbolizes as a neighbour and backtraces lose the caller
(why arm64 took its LL/SC loops back in line, b2c3ccbd0011).

The gate compiles asmcheck/refcount_bigtu.c (every refcount_t operation
the series could build from asm, followed by more than 1 MiB of text)
in the series tree with each compiler, as kbuild compiles the kernel,
and checks the object: it assembles, no instruction lies outside a
function, every conditional branch lands inside its own function, and no
conditional branch is left to the linker (a relocation). It also fails
on any `.subsection` the series adds.
"""

import os
import re
import shutil
import subprocess
from typing import List, NamedTuple, Optional, Tuple

from . import build, log, paths, results, targets

TU_DIR = os.path.join(paths.REPO, 'asmcheck')
TU = 'refcount_bigtu'
# Where the TU is compiled in the kernel tree (untracked, removed after).
TREE_DIR = 'kmt-asmcheck'

COND_BRANCHES = ('cbz', 'cbnz', 'tbz', 'tbnz')
COND_RELOCS = ('R_AARCH64_CONDBR19', 'R_AARCH64_TSTBR14')
# What a compiler or assembler may put between functions.
PADDING = ('nop', 'udf', '.inst', '.word')


class Compiler(NamedTuple):
    name: str
    llvm: str          # '' for GCC, else make's LLVM= value ('1', '-19')
    tool: str          # the binary that must exist


COMPILERS = (
    Compiler('gcc', '', paths.CROSS_COMPILE + 'gcc'),
    Compiler('clang', '1', 'clang'),
    Compiler('clang-19', '-19', 'clang-19'),
)


class Function(NamedTuple):
    name: str
    start: int
    end: int


class Insn(NamedTuple):
    addr: int
    mnemonic: str
    operands: str
    reloc: str          # a relocation on this instruction, or ''


def is_cond_branch(mnemonic):
    return mnemonic.startswith('b.') or mnemonic in COND_BRANCHES


_SYM = re.compile(r'^([0-9a-f]+)\s+\S.*?\s([FO ])\s+(\S+)\s+([0-9a-f]+)\s+(\S+)$')


def functions(symtab, section='.text'):
    """Function symbols of `section` from `objdump -t` output."""
    out = []
    for line in symtab.splitlines():
        m = _SYM.match(line.strip())
        if m and m.group(2) == 'F' and m.group(3) == section:
            start = int(m.group(1), 16)
            out.append(Function(m.group(5), start, start + int(m.group(4), 16)))
    return sorted(out, key=lambda f: f.start)


_SECTION = re.compile(r'^Disassembly of section (\S+):')
_INSN = re.compile(r'^\s*([0-9a-f]+):\s+(?:[0-9a-f]{8}\s+)?(\S+)\s*(.*)$')
_RELOC = re.compile(r'^\s*([0-9a-f]+):\s+(R_AARCH64_\w+)\s+(.*)$')


def instructions(disasm, section='.text'):
    """Instructions of `section` from `objdump -dr` output, with the
    relocation objdump prints after an instruction attached to it."""
    insns = []
    current = None
    for line in disasm.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1)
            continue
        if current != section:
            continue
        m = _RELOC.match(line)
        if m:
            addr = int(m.group(1), 16)
            if insns and insns[-1].addr == addr:
                insns[-1] = insns[-1]._replace(reloc=m.group(2))
            continue
        m = _INSN.match(line)
        if m:
            # objdump's own comments ("// b.any", "// #1") are not operands
            operands = m.group(3).split('//')[0].strip()
            insns.append(Insn(int(m.group(1), 16), m.group(2), operands, ''))
    return insns


def branch_target(operands):
    """The target address of a direct branch's operands, or None
    ("w1, 1c <f+0x1c>", "#3, 40 <f+0x40>", "1c <f+0x1c>")."""
    m = re.search(r'(?:^|,\s*)([0-9a-f]+)(?:\s+<[^>]*>)?\s*$', operands)
    return int(m.group(1), 16) if m else None


def _owner(funcs, addr) -> Optional[Function]:
    for f in funcs:
        if f.start <= addr < f.end:
            return f
    return None


def problems(funcs, insns) -> List[str]:
    """What is wrong with the code of one section: instructions outside any
    function (code in a subsection), conditional branches that leave their
    function, and conditional branches the assembler left to the linker."""
    found = []
    end = max(i.addr for i in insns) + 4 if insns else 0
    for i in insns:
        f = _owner(funcs, i.addr)
        if f is None:
            if i.mnemonic not in PADDING:
                found.append('0x%x: %s %s lies outside every function (code in a '
                             'subsection?)' % (i.addr, i.mnemonic, i.operands))
            t = branch_target(i.operands) if is_cond_branch(i.mnemonic) else None
            if t is not None and not 0 <= t < end:
                found.insert(0, '0x%x: %s %s lands past the end of the section '
                             '(0x%x): a wrong branch target' % (i.addr, i.mnemonic,
                                                               i.operands, end))
            continue
        if not is_cond_branch(i.mnemonic):
            continue
        if i.reloc in COND_RELOCS:
            found.append('0x%x in %s: %s %s left to the linker (%s): a conditional '
                         'branch across sections' % (i.addr, f.name, i.mnemonic,
                                                     i.operands, i.reloc))
            continue
        t = branch_target(i.operands)
        if t is None or not f.start <= t < f.end:
            to = _owner(funcs, t) if t is not None else None
            found.append('0x%x in %s: %s %s lands %s' % (
                i.addr, f.name, i.mnemonic, i.operands,
                'in %s' % to.name if to else 'outside every function'))
    return found


def count_cond_branches(funcs, insns):
    return sum(1 for i in insns if is_cond_branch(i.mnemonic) and _owner(funcs, i.addr))


def added_subsections(diff_text):
    """Lines a diff adds that switch the asm to another (sub)section of
    text: `.subsection N`, or `.pushsection .text...`."""
    return [l[1:].strip() for l in diff_text.splitlines()
            if l.startswith('+') and not l.startswith('+++')
            and re.search(r'\.subsection\b|\.pushsection\s+"?\.text', l)]


# ---- compiling in the kernel tree --------------------------------------

def _compiler_cfg(comp):
    """The lean config the TU is compiled with (the series' fragments on,
    so that the fast path is built where the series has it)."""
    return targets.CONFIGS['lean-clang' if comp.llvm else 'lean']


def _make(comp, out):
    args = ['make', '-j' + build.jobs(), 'O=' + out, 'ARCH=' + paths.ARCH]
    if comp.llvm:
        return args + ['LLVM=' + comp.llvm, 'CROSS_COMPILE=' + paths.CROSS_COMPILE]
    return args + ['CROSS_COMPILE=' + paths.CROSS_COMPILE]


def _objdump():
    return paths.CROSS_COMPILE + 'objdump'


def compile_tu(comp, logfile) -> Tuple[bool, str, str]:
    """Configure an out dir for `comp`, make prepare, compile the TU in the
    series tree. (compiled, object path, the compiler's last lines)."""
    out = os.path.join(paths.OUT, 'asmcheck-' + comp.name)
    cfg = _compiler_cfg(comp)
    env = dict(os.environ, **build.KERNEL_ENV, CROSS_COMPILE=paths.CROSS_COMPILE)
    if comp.llvm:
        env.update(LLVM=comp.llvm, CC='clang' + ('' if comp.llvm == '1' else comp.llvm))
    frags = build.fragment_paths(cfg)
    os.makedirs(out, exist_ok=True)
    merge = [os.path.join(paths.SRC, 'scripts/kconfig/merge_config.sh'), '-O', out, '-n'] + frags
    log.run(merge, logfile=logfile, cwd=paths.SRC, env=env)
    log.run(_make(comp, out) + ['prepare'], logfile=logfile, cwd=paths.SRC, env=env)
    tree_dir = os.path.join(paths.SRC, TREE_DIR)
    shutil.rmtree(tree_dir, ignore_errors=True)
    shutil.copytree(TU_DIR, tree_dir)
    obj = os.path.join(out, TREE_DIR, TU + '.o')
    if os.path.exists(obj):
        os.remove(obj)
    try:
        cmd = _make(comp, out) + [TREE_DIR + '/' + TU + '.o']
        log.show_cmd(cmd, paths.SRC)
        res = subprocess.run(cmd, cwd=paths.SRC, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    finally:
        shutil.rmtree(tree_dir, ignore_errors=True)
    with open(logfile, 'a') as lf:
        lf.write('$ %s\n%s' % (' '.join(cmd), res.stdout))
    tail = '; '.join(l.strip() for l in res.stdout.splitlines()
                     if 'rror' in l or 'out of range' in l)[:300]
    return res.returncode == 0 and os.path.exists(obj), obj, tail


def check_object(obj):
    """(problems, number of conditional branches checked) of an object."""
    symtab = subprocess.run([_objdump(), '-t', obj], stdout=subprocess.PIPE,
                            text=True, check=True).stdout
    disasm = subprocess.run([_objdump(), '-dr', obj], stdout=subprocess.PIPE,
                            text=True, check=True).stdout
    funcs = functions(symtab)
    insns = instructions(disasm)
    if not funcs or not insns:
        return ['no functions or no code in .text of %s' % obj], 0
    return problems(funcs, insns), count_cond_branches(funcs, insns)


def gate(tag, git):
    """The 'asm' series gate: one test per compiler, and one for the
    series' diff. `git` runs git in the kernel tree."""
    logfile = os.path.join(paths.LOGS, 'series-asm.log')
    if os.path.exists(logfile):
        os.remove(logfile)
    os.makedirs(paths.LOGS, exist_ok=True)
    tests = []
    diff = git(['diff', tag, 'HEAD', '--', '*.h', '*.S', '*.c']).stdout
    subs = added_subsections(diff)
    tests.append(results.test('asm', 'no code in subsections',
                              results.FAIL if subs else results.PASS,
                              '; '.join(subs[:3])))
    for comp in COMPILERS:
        name = '%s: %s.c, 1 MiB of text after the call sites' % (comp.name, TU)
        if comp.llvm == '1' and paths.BASE.llvm != '1':
            tests.append(results.test('asm', name, results.SKIP,
                                      'the %s base needs a newer LLVM than clang 14 '
                                      '(Base.llvm = %s)' % (paths.BASE_NAME, paths.BASE.llvm)))
            continue
        if not shutil.which(comp.tool):
            tests.append(results.test('asm', name, results.FAIL,
                                      '%s not installed (make setup)' % comp.tool))
            continue
        with log.phase('asm: %s with %s' % (TU, comp.name)):
            try:
                ok, obj, tail = compile_tu(comp, logfile)
            except log.StepError as e:
                tests.append(results.test('asm', name, results.FAIL, str(e).splitlines()[0]))
                continue
            if not ok:
                tests.append(results.test('asm', name, results.FAIL,
                                          'does not assemble: ' + (tail or 'see ' + logfile)))
                log.info('%s: does not assemble: %s' % (comp.name, tail))
                continue
            found, n = check_object(obj)
            if not found and n == 0:
                found = ['no conditional branch in the object: nothing was checked']
            tests.append(results.test('asm', name, results.FAIL if found else results.PASS,
                                      '; '.join(found[:3])))
            log.info('%s: %s' % (comp.name, '%d conditional branches, each inside its '
                                 'function' % n if not found else 'WRONG: ' + found[0]))
    return tests, logfile
