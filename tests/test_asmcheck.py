import unittest

from kmt import asmcheck

SYMTAB = """\
refcount_bigtu.o:     file format elf64-littleaarch64

SYMBOL TABLE:
0000000000000000 l    d  .text	0000000000000000 .text
0000000000000000 g     F .text	000000000000003c asmcheck_inc
000000000000003c g     F .text	0000000000000020 asmcheck_dec
000000000000005c g     F .text	0000000000100104 asmcheck_pad
0000000000000000         *UND*	0000000000000000 refcount_warn_saturate
0000000000000000 g     F .init.text	0000000000000010 asmcheck_init
"""

HEAD = """\

refcount_bigtu.o:     file format elf64-littleaarch64


Disassembly of section .text:

0000000000000000 <asmcheck_inc>:
"""

# The LL/SC loop in line: the conditional branch stays in its function.
IN_LINE = HEAD + """\
       0:	f9800011 	prfm	pstl1strm, [x0]
       4:	885f7c08 	ldxr	w8, [x0]
       8:	11000509 	add	w9, w8, #0x1
       c:	880a7c09 	stxr	w10, w9, [x0]
      10:	35ffffaa 	cbnz	w10, 4 <asmcheck_inc+0x4>
      14:	7100051f 	cmp	w8, #0x1
      18:	5400004b 	b.lt	20 <asmcheck_inc+0x20>  // b.tstop
      1c:	d65f03c0 	ret
      20:	52800001 	mov	w1, #0x0                   	// #0
      24:	94000000 	bl	0 <refcount_warn_saturate>
			24: R_AARCH64_CALL26	refcount_warn_saturate
      28:	17fffffd 	b	1c <asmcheck_inc+0x1c>
      2c:	d503201f 	nop
"""

# As clang 14 assembled the series' subsection loop past 1 MiB of text.
SUBSECTION = IN_LINE + """\
  100160:	f9800011 	prfm	pstl1strm, [x0]
  100164:	885f7c09 	ldxr	w9, [x0]
  100168:	1100052a 	add	w10, w9, #0x1
  10016c:	880b7c0a 	stxr	w11, w10, [x0]
  100170:	347fe2eb 	cbz	w11, 200010 <asmcheck_pad+0x1ffd74>
  100174:	17fffffc 	b	100164 <asmcheck_pad+0x10010c>
"""

# A conditional branch into another function, and one the assembler left
# to the linker (its label in another section).
ACROSS = HEAD + """\
       0:	34000200 	cbz	w0, 40 <asmcheck_dec+0x4>
       4:	34000000 	cbz	w0, 0 <asmcheck_inc>
			4: R_AARCH64_CONDBR19	.text.unlikely+0x8
       8:	d65f03c0 	ret
"""


def check(disasm):
    return asmcheck.problems(asmcheck.functions(SYMTAB),
                             asmcheck.instructions(disasm))


class Parsing(unittest.TestCase):
    def test_functions_of_the_section(self):
        funcs = asmcheck.functions(SYMTAB)
        self.assertEqual([f.name for f in funcs], ['asmcheck_inc', 'asmcheck_dec',
                                                   'asmcheck_pad'])
        self.assertEqual((funcs[0].start, funcs[0].end), (0, 0x3c))

    def test_objdump_comments_are_not_operands(self):
        insns = asmcheck.instructions(IN_LINE)
        blt = [i for i in insns if i.mnemonic == 'b.lt'][0]
        self.assertEqual(blt.operands, '20 <asmcheck_inc+0x20>')
        self.assertEqual(asmcheck.branch_target(blt.operands), 0x20)

    def test_targets(self):
        self.assertEqual(asmcheck.branch_target('w10, 4 <asmcheck_inc+0x4>'), 4)
        self.assertEqual(asmcheck.branch_target('w1, #31, 1c <f+0x1c>'), 0x1c)
        self.assertIsNone(asmcheck.branch_target('x30'))

    def test_relocation_is_attached(self):
        insns = asmcheck.instructions(ACROSS)
        self.assertEqual(insns[1].reloc, 'R_AARCH64_CONDBR19')
        self.assertEqual(insns[0].reloc, '')

    def test_other_sections_are_left_out(self):
        text = IN_LINE + "\nDisassembly of section .init.text:\n\n" \
            "0000000000000000 <asmcheck_init>:\n   0:	34000000 	cbz	w0, 0 <x>\n"
        self.assertEqual(len(asmcheck.instructions(text)), 12)


class Problems(unittest.TestCase):
    def test_in_line_loop_passes(self):
        self.assertEqual(check(IN_LINE), [])
        self.assertEqual(asmcheck.count_cond_branches(
            asmcheck.functions(SYMTAB), asmcheck.instructions(IN_LINE)), 2)

    def test_clang14_wrong_target_is_found_first(self):
        found = check(SUBSECTION)
        self.assertIn('lands past the end of the section', found[0])
        self.assertIn('0x100170: cbz', found[0])
        self.assertTrue(any('outside every function' in f for f in found[1:]))

    def test_branch_into_another_function(self):
        found = check(ACROSS)
        self.assertIn('0x0 in asmcheck_inc: cbz w0, 40 <asmcheck_dec+0x4> lands in '
                      'asmcheck_dec', found[0])

    def test_branch_left_to_the_linker(self):
        self.assertTrue(any('left to the linker (R_AARCH64_CONDBR19)' in f
                            for f in check(ACROSS)))


class Diff(unittest.TestCase):
    def test_added_subsection_is_found(self):
        diff = ('+++ b/arch/arm64/include/asm/refcount.h\n'
                '+\t"\t.subsection 1\\n"\t\t\t\t\t\\\n'
                '+\t"\t.pushsection .text.unlikely\\n"\n'
                '-\t"\t.subsection 1\\n"\n'
                '+\t".pushsection .altinstructions, \\"a\\"\\n"\n')
        self.assertEqual(len(asmcheck.added_subsections(diff)), 2)

    def test_nothing_added(self):
        self.assertEqual(asmcheck.added_subsections('+\tldxr\tw0, [x1]\n'), [])


if __name__ == '__main__':
    unittest.main()
