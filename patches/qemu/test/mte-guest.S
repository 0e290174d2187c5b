/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * A bare-metal AArch64 guest for the MTE counting plugin: with the MMU on
 * and the same block of RAM mapped in both halves of the address space,
 * it runs known numbers of MTE, barrier and system register instructions
 * between region markers, in the lower half (region 1), in the upper half
 * through two calls that keep frame records (region 2), then a restarted
 * region (3), an unmatched end marker and a region marked with other
 * HINTs. It exits through semihosting: status 0, or 1 on any exception.
 *
 * qemu-system-aarch64 -M virt,mte=on -cpu max -display none -semihosting
 *   -kernel mte-guest.elf -plugin libmte.so,... -d plugin
 */
    .arch armv8.5-a+memtag

    .equ HIGH, 0xffffff8000000000   /* T1SZ = 25: the upper alias of VA 0 */

    .text
    .global _start
_start:
    adr x0, vectors
    msr vbar_el1, x0
    adrp x0, stack_top
    add x0, x0, :lo12:stack_top
    mov sp, x0
    mov x29, #0
    mov x30, #0

    /* One 1 GiB block at PA 0x40000000: Normal Tagged, inner shareable */
    adrp x0, ttb
    ldr x1, =(0x40000000 | (1 << 10) | (3 << 8) | (0 << 2) | 1)
    str x1, [x0, #8]
    msr ttbr0_el1, x0
    msr ttbr1_el1, x0
    mov x1, #0xf0                   /* Attr0: Tagged Normal, write-back */
    msr mair_el1, x1
    ldr x1, =(25 | (1 << 8) | (1 << 10) | (3 << 12) | (25 << 16) | \
              (1 << 24) | (1 << 26) | (3 << 28) | (2 << 30) | (1 << 32) | \
              (1 << 37) | (1 << 38))
    msr tcr_el1, x1
    isb
    ldr x1, =((1 << 0) | (1 << 2) | (1 << 12) | (1 << 43) | (1 << 11) | \
              (1 << 20) | (1 << 22) | (1 << 23) | (1 << 28) | (1 << 29))
    msr sctlr_el1, x1
    isb

    /* The outermost frame record: no caller */
    stp x29, x30, [sp, #-16]!
    mov x29, sp

    /* Region 1, lower half: 35 instructions */
    adrp x0, buf
    mov x1, #0
    mov x2, #0
    hint #0x70
    stg x0, [x0]
    stg x0, [x0, #16]!
    stg x0, [x0], #16
    stzg x0, [x0]
    st2g x0, [x0, #32]
    stz2g x0, [x0, #64]
    stgp x1, x2, [x0]
    stgp x1, x2, [x0, #16]!
    stgp x1, x2, [x0], #16
    stgm x1, [x0]
    stzgm x1, [x0]
    dc gva, x0
    dc gzva, x0
    ldg x3, [x0]
    ldgm x3, [x0]
    dsb sy
    dsb ish
    .inst 0xd503323f                /* dsb oshnxs */
    dmb ish
    isb
    ssbb                            /* not DSBs */
    pssbb
    mrs x3, tfsr_el1
    msr gcr_el1, x1
    mrs x3, gcr_el1
    mov x4, #3
1:  stg x0, [x0]
    subs x4, x4, #1
    b.ne 1b
    hint #0x71

    /* Region 2: one call into the upper half, 1 + 13 instructions */
    adr x9, func_a
    ldr x10, =HIGH
    add x9, x9, x10
    hint #0x70
    blr x9
    hint #0x71

    /* Region 3, restarted: only the last 2 instructions count */
    hint #0x70
    nop
    hint #0x70
    nop
    nop
    hint #0x71
    hint #0x71                      /* unmatched */

    /* A region marked with HINT #0x72 and #0x73: 3 instructions */
    adrp x0, buf
    hint #0x72
    stg x0, [x0]
    stg x0, [x0, #16]
    isb
    hint #0x73

    adr x1, exit_ok
    b exit

func_a:
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    bl func_b
    ldp x29, x30, [sp], #16
    ret

func_b:
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    adrp x0, buf
    stg x0, [x0]
    dc gva, x0
    mrs x3, tfsr_el1
    ldp x29, x30, [sp], #16
    ret

fail:
    adr x1, exit_fail
exit:
    mov x0, #0x18                   /* SYS_EXIT */
    hlt #0xf000
    b .

    .balign 2048
vectors:
    .rept 16
    b fail
    .balign 128
    .endr

    .balign 16
exit_ok:
    .quad 0x20026, 0                /* ADP_Stopped_ApplicationExit, 0 */
exit_fail:
    .quad 0x20023, 0                /* ADP_Stopped_RunTimeErrorUnknown */
    .ltorg

    .data
    .balign 4096
ttb:
    .fill 512, 8, 0

    .bss
    .balign 4096
buf:
    .fill 4096, 1, 0
    .balign 16
    .fill 4096, 1, 0
stack_top:
