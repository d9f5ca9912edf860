/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stacks: one sampled call's user stack, as the BPF side sends it to
 * userspace through the stack_events ring buffer (bpf/stacks.bpf.h), and
 * unwound there with the binaries' CFI (user/collect/unwind.c).
 */
#ifndef SC_STACK_H
#define SC_STACK_H

/* How much of the user stack is copied, from the stack pointer up. */
#define SC_STACK_BYTES 16384
#define SC_STACK_PAGE 4096
/* The stack_events ring buffer (a power of two, in bytes). */
#define SC_STACK_RINGBUF (16U << 20)
/* --stacks without N: one call in this many is sampled (per CPU, with a
 * random countdown of mean N). Chosen in docs/callsites.md, "Cost".
 */
#define SC_STACK_DEFAULT_PERIOD 1000
/* --stacks-by time without N: one sample per this many µs in calls. */
#define SC_STACK_DEFAULT_TIME_US 200
/* Under pressure a CPU samples at most 2^SC_STACK_MAX_SHIFT times less
 * often (bpf/stacks.bpf.h); a mask too, for the verifier.
 */
#define SC_STACK_MAX_SHIFT 7

/*
 * The user registers of the call, in DWARF order: on x86_64 rax, rdx,
 * rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip; on arm64 x0..x30 (x29 the
 * frame pointer), sp, then pc (which arm64's DWARF numbers no register).
 * (The BPF side is built for the target, so its compiler defines no
 * __aarch64__: -D__TARGET_ARCH_arm64 says it.)
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define SC_STACK_NREGS 33
#define SC_STACK_REG_BP 29
#define SC_STACK_REG_SP 31
#define SC_STACK_REG_IP 32
#else
#define SC_STACK_NREGS 17
#define SC_STACK_REG_BP 6
#define SC_STACK_REG_SP 7
#define SC_STACK_REG_IP 16
#endif

/* The process's first sample, or its first since it mapped more code:
 * userspace reads its mappings (again).
 */
#define SC_STACK_F_NEW_MAPS 1U

struct sc_stack_event {
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 nr;
	__u32 abi;
	__u64 start_ns; /* the process's start time: its identity */
	__u64 regs[SC_STACK_NREGS];
	__u32 len; /* bytes of data[] copied from regs[SC_STACK_REG_SP] */
	char comm[16];
	__u32 flags;   /* SC_STACK_F_* */
	__u32 exec_id; /* the task's exec count: which program image */
	/* The stack_period-sized shares of calls the sample stands for: 1,
	 * or 2^k while the ring buffer was filling (bpf/stacks.bpf.h).
	 */
	__u32 weight;
	__u8 data[SC_STACK_BYTES];
};

#endif
