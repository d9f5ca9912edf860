// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Walking a sampled stack with CFI (cfi_walk.h). A frame's row, from
 * libdw, says how to find the canonical frame address (CFA) and where
 * each register of the caller was saved, as DWARF expressions; they are
 * evaluated here against the frame's registers and the stack's copy. The
 * caller's stack pointer is the CFA, its pc the return address column.
 */
#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/cfi_walk.h"

#if defined(__aarch64__)
#define DWARF_NREGS 32 /* x0..x30, sp */
#define REG_FP 29
#define REG_LR 30
#else
#define DWARF_NREGS 17 /* rax..r15, the return address (rip) */
#define REG_FP SC_STACK_REG_BP
#endif

#define EVAL_DEPTH 16

struct regs {
	uint64_t v[SC_STACK_NREGS];
	uint64_t known; /* bit per register */
};

static bool known(const struct regs *r, unsigned int reg)
{
	return reg < SC_STACK_NREGS && (r->known >> reg & 1);
}

static void set(struct regs *r, unsigned int reg, uint64_t v)
{
	r->v[reg] = v;
	r->known |= 1ULL << reg;
}

/* A word of the copied stack. */
static bool mem_read(const struct sc_stack_event *e, uint64_t addr,
		     uint64_t *out)
{
	uint64_t base = e->regs[SC_STACK_REG_SP] &
			~(uint64_t)(SC_STACK_PAGE - 1);

	if (addr < base || addr - base > e->len ||
	    e->len - (addr - base) < sizeof(*out))
		return false;
	memcpy(out, e->data + (addr - base), sizeof(*out));
	return true;
}

/* The index of the op at byte offset off, or n. */
static size_t op_at(const Dwarf_Op *ops, size_t n, Dwarf_Word off)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].offset == off)
			return i;
	return n;
}

struct eval {
	const struct sc_stack_event *e;
	const struct regs *r;
	uint64_t cfa;
	bool have_cfa;
};

static bool binop(uint8_t atom, uint64_t a, uint64_t b, uint64_t *out)
{
	switch (atom) {
	case DW_OP_plus:
		*out = a + b;
		return true;
	case DW_OP_minus:
		*out = a - b;
		return true;
	case DW_OP_mul:
		*out = a * b;
		return true;
	case DW_OP_and:
		*out = a & b;
		return true;
	case DW_OP_or:
		*out = a | b;
		return true;
	case DW_OP_xor:
		*out = a ^ b;
		return true;
	case DW_OP_shl:
		*out = b < 64 ? a << b : 0;
		return true;
	case DW_OP_shr:
		*out = b < 64 ? a >> b : 0;
		return true;
	case DW_OP_shra:
		*out = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
		return true;
	case DW_OP_eq:
		*out = a == b;
		return true;
	case DW_OP_ne:
		*out = a != b;
		return true;
	case DW_OP_lt:
		*out = (int64_t)a < (int64_t)b;
		return true;
	case DW_OP_gt:
		*out = (int64_t)a > (int64_t)b;
		return true;
	case DW_OP_le:
		*out = (int64_t)a <= (int64_t)b;
		return true;
	case DW_OP_ge:
		*out = (int64_t)a >= (int64_t)b;
		return true;
	default:
		return false;
	}
}

struct stack {
	uint64_t v[EVAL_DEPTH];
	size_t n;
};

static bool push(struct stack *s, uint64_t x)
{
	if (s->n == EVAL_DEPTH)
		return false;
	s->v[s->n++] = x;
	return true;
}

/* The k-th value from the top (0: the top), when there is one. */
static uint64_t *peek(struct stack *s, uint64_t k)
{
	return k < s->n ? &s->v[s->n - 1 - k] : NULL;
}

/* One op on the stack: false when it cannot be evaluated. *jump: the
 * byte offset to go on at, else UINT64_MAX.
 */
static bool eval_op(const struct eval *ev, const Dwarf_Op *op, struct stack *s,
		    uint64_t *jump)
{
	uint8_t a = op->atom;
	uint64_t *t = peek(s, 0), *u = peek(s, 1), *w = peek(s, 2), x;
	unsigned int reg;

	*jump = UINT64_MAX;
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
		return push(s, (uint64_t)(a - DW_OP_lit0));
	if ((a >= DW_OP_breg0 && a <= DW_OP_breg31) || a == DW_OP_bregx) {
		reg = a == DW_OP_bregx ? (unsigned int)op->number :
					 (unsigned int)(a - DW_OP_breg0);
		if (reg >= DWARF_NREGS || !known(ev->r, reg))
			return false;
		return push(s, ev->r->v[reg] + (a == DW_OP_bregx ? op->number2 :
								   op->number));
	}
	switch (a) {
	case DW_OP_const1u:
	case DW_OP_const2u:
	case DW_OP_const4u:
	case DW_OP_const8u:
	case DW_OP_constu:
	case DW_OP_const1s:
	case DW_OP_const2s:
	case DW_OP_const4s:
	case DW_OP_const8s:
	case DW_OP_consts:
		return push(s, op->number);
	case DW_OP_call_frame_cfa:
		return ev->have_cfa && push(s, ev->cfa);
	case DW_OP_plus_uconst:
		if (t)
			*t += op->number;
		return t;
	case DW_OP_deref:
		return t && mem_read(ev->e, *t, t);
	case DW_OP_dup:
		return t && push(s, *t);
	case DW_OP_drop:
		if (t)
			s->n--;
		return t;
	case DW_OP_over:
		return u && push(s, *u);
	case DW_OP_pick:
		return peek(s, op->number) && push(s, *peek(s, op->number));
	case DW_OP_swap:
		if (!u)
			return false;
		x = *t, *t = *u, *u = x;
		return true;
	case DW_OP_rot:
		if (!w)
			return false;
		x = *t, *t = *u, *u = *w, *w = x;
		return true;
	case DW_OP_neg:
		if (t)
			*t = -*t;
		return t;
	case DW_OP_not:
		if (t)
			*t = ~*t;
		return t;
	case DW_OP_abs:
		if (t && (int64_t)*t < 0)
			*t = -*t;
		return t;
	case DW_OP_nop:
		return true;
	case DW_OP_skip:
	case DW_OP_bra:
		if (a == DW_OP_bra && (!t || !s->v[--s->n]))
			return t; /* not taken */
		/* from the end of this op: 1 byte, then 2 of offset */
		*jump = op->offset + 3 + (uint64_t)(int16_t)op->number;
		return true;
	default:
		if (!u || !binop(a, *u, *t, &x))
			return false;
		s->n--;
		*peek(s, 0) = x;
		return true;
	}
}

/*
 * Evaluate a CFI expression. *value: the result is a value (the CFA, a
 * val_ rule, a register's contents); else it is the address the value
 * was saved at, which the caller reads.
 */
static bool eval(const struct eval *ev, const Dwarf_Op *ops, size_t n,
		 uint64_t *out, bool *value)
{
	struct stack s = { .n = 0 };
	size_t steps = 0;

	*value = false;
	for (size_t i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;
		uint64_t jump;

		if (++steps > 256) /* a loop of skips */
			return false;
		if ((a >= DW_OP_reg0 && a <= DW_OP_reg31) || a == DW_OP_regx) {
			/* in a register: its contents (the last op) */
			unsigned int reg =
				a == DW_OP_regx ?
					(unsigned int)ops[i].number :
					(unsigned int)(a - DW_OP_reg0);

			if (reg >= DWARF_NREGS || !known(ev->r, reg) ||
			    i + 1 != n)
				return false;
			*out = ev->r->v[reg];
			*value = true;
			return true;
		}
		if (a == DW_OP_stack_value) {
			*value = true;
			break;
		}
		if (!eval_op(ev, &ops[i], &s, &jump))
			return false;
		if (jump != UINT64_MAX) {
			size_t j = op_at(ops, n, jump);

			if (j == n)
				break; /* past the end: done */
			i = j - 1;     /* the loop's i++ makes it j */
		}
	}
	if (!s.n)
		return false;
	*out = s.v[s.n - 1];
	return true;
}

/* The value a rule gives (reading memory for a location). */
static bool rule_value(const struct eval *ev, const Dwarf_Op *ops, size_t n,
		       uint64_t *out)
{
	bool value;
	uint64_t x;

	if (!eval(ev, ops, n, &x, &value))
		return false;
	if (value) {
		*out = x;
		return true;
	}
	return mem_read(ev->e, x, out);
}

/* One frame up with its CFI row: the caller's registers, and whether the
 * frame is a signal handler's (its caller's pc is exact).
 */
static bool step_cfi(const struct sc_stack_event *e, Dwarf_Frame *fr,
		     const struct regs *cur, struct regs *caller, bool *signal)
{
	struct eval ev = { .e = e, .r = cur };
	Dwarf_Op mem[3], *ops;
	size_t nops;
	int ra;

	ra = dwarf_frame_info(fr, NULL, NULL, signal);
	if (ra < 0 || ra >= DWARF_NREGS)
		return false;
	if (dwarf_frame_cfa(fr, &ops, &nops) || !nops)
		return false;
	{
		bool value;

		if (!eval(&ev, ops, nops, &ev.cfa, &value))
			return false;
	}
	ev.have_cfa = true;
	memset(caller, 0, sizeof(*caller));
	for (int reg = 0; reg < DWARF_NREGS; reg++) {
		uint64_t v;

		if (dwarf_frame_register(fr, reg, mem, &ops, &nops))
			continue;
		if (!nops) {
			if (!ops && known(cur, (unsigned int)reg)) /* same */
				set(caller, (unsigned int)reg, cur->v[reg]);
			continue; /* else undefined */
		}
		if (rule_value(&ev, ops, nops, &v))
			set(caller, (unsigned int)reg, v);
	}
	/* the caller's stack pointer is the CFA */
	set(caller, SC_STACK_REG_SP, ev.cfa);
	if (!known(caller, (unsigned int)ra))
		return false;
#if defined(__aarch64__)
	/* a return address signed by pointer authentication: its bits above
	 * the 48-bit user address space are the signature
	 */
	set(caller, SC_STACK_REG_IP, caller->v[ra] & ((1ULL << 48) - 1));
#else
	set(caller, SC_STACK_REG_IP, caller->v[ra]);
#endif
	return true;
}

/* One frame up by the frame pointer chain (no CFI here). */
static bool step_fp(const struct sc_stack_event *e, const struct regs *cur,
		    struct regs *caller)
{
	uint64_t fp = cur->v[REG_FP], next_fp, ret;

	if (!known(cur, REG_FP) || fp < cur->v[SC_STACK_REG_SP] || fp & 7 ||
	    !mem_read(e, fp, &next_fp) || !mem_read(e, fp + 8, &ret))
		return false;
	memset(caller, 0, sizeof(*caller));
	set(caller, REG_FP, next_fp);
	set(caller, SC_STACK_REG_SP, fp + 16);
#if defined(__aarch64__)
	set(caller, REG_LR, ret);
	ret &= (1ULL << 48) - 1;
#endif
	set(caller, SC_STACK_REG_IP, ret);
	return true;
}

size_t cfi_walk(const struct sc_stack_event *e, cfi_locate_fn locate, void *ctx,
		uint64_t *pcs, size_t max)
{
	struct regs cur = {}, caller;
	bool activation = true;
	size_t n = 0;

	for (int i = 0; i < SC_STACK_NREGS; i++)
		set(&cur, (unsigned int)i, e->regs[i]);
	while (n < max) {
		uint64_t pc = cur.v[SC_STACK_REG_IP], at, vaddr;
		struct objfile *f;
		Dwarf_Frame *fr = NULL;
		bool signal = false, ok = false;

		if (!pc)
			break;
		/* a return address is after its call: name the call */
		at = activation ? pc : pc - 1;
		pcs[n++] = at;
		if (!e->len)
			break;
		f = locate(ctx, at, &vaddr);
		if (f && !objfile_cfi_frame(f, vaddr, &fr)) {
			ok = step_cfi(e, fr, &cur, &caller, &signal);
			free(fr);
		} else {
			ok = step_fp(e, &cur, &caller);
		}
		if (!ok || !caller.v[SC_STACK_REG_IP])
			break;
		/* the stack grows down: a caller's frame is above */
		if (caller.v[SC_STACK_REG_SP] < cur.v[SC_STACK_REG_SP] ||
		    (caller.v[SC_STACK_REG_SP] == cur.v[SC_STACK_REG_SP] &&
		     caller.v[SC_STACK_REG_IP] == pc))
			break;
		activation = signal;
		cur = caller;
	}
	return n;
}
