// SPDX-License-Identifier: GPL-2.0
/*
 * Every refcount_t operation whose atomics an architecture may build from
 * asm, each in a function of its own, followed by more than 1 MiB of text:
 * code that one of them put out of line (a subsection is emitted after
 * all of the translation unit's .text) would then lie beyond the reach of
 * a conditional branch back into its function.
 */
#include <linux/refcount.h>

#define OP(name, expr)				\
void asmcheck_##name(refcount_t *r);		\
noinline void asmcheck_##name(refcount_t *r)	\
{						\
	expr;					\
}

#define TEST(name, expr)			\
bool asmcheck_##name(refcount_t *r);		\
noinline bool asmcheck_##name(refcount_t *r)	\
{						\
	return expr;				\
}

OP(inc, refcount_inc(r))
OP(add, refcount_add(2, r))
OP(add_var, refcount_add(READ_ONCE(r->refs.counter) & 7, r))
OP(dec, refcount_dec(r))
TEST(inc_not_zero, refcount_inc_not_zero(r))
TEST(add_not_zero, refcount_add_not_zero(2, r))
TEST(dec_and_test, refcount_dec_and_test(r))
TEST(sub_and_test, refcount_sub_and_test(2, r))
TEST(dec_not_one, refcount_dec_not_one(r))
TEST(dec_if_one, refcount_dec_if_one(r))

void asmcheck_pad(void);
noinline void asmcheck_pad(void)
{
	/* 1 MiB and a bit of text after every call site above */
	asm volatile(".skip 0x100100");
}
