package dev.panverbs.bindings;

import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.ibv_cq_ex;
import dev.panverbs.bindings.verbs.ibv_dm;
import dev.panverbs.bindings.verbs.ibv_qp_ex;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Virtual ("address-first") downcall handles for the function pointers that providers install in
 * {@code ibv_context.ops}, {@code verbs_context}, {@code ibv_qp_ex}, {@code ibv_cq_ex}, {@code ibv_dm} and
 * {@code ibv_wq}: one {@code static final} handle per C signature, each taking the function address
 * {@code fn} first, as in the JDK's {@code CallOverheadVirtual} benchmark. Nothing is looked up per call.
 *
 * <p>Method names spell the C signature: return type, underscore, parameter types, with {@code p} pointer,
 * {@code i} 32-bit int, {@code j} 64-bit int ({@code uint64_t}, {@code size_t}), {@code b} {@code uint8_t},
 * {@code s} {@code uint16_t}, {@code v} void. Descriptors are jextract's, taken from a representative slot.
 *
 * <p>Four linkages:
 * <ul>
 *   <li>data-path slots that stay in user space in every provider (poll_cq, post_recv, post_srq_recv, the
 *       {@code ibv_wr_*} builders, wr_start/wr_abort, CQ-ex polling and readers, DM copies) are
 *       {@code critical(false)}: no syscall, no blocking, no upcall; at most a spinlock that the same thread
 *       releases in {@code wr_complete}/{@code end_poll}. JMH ({@code perf/}): ~1.5-2.5 ns less per call, which
 *       shows on the extended APIs (a call per WR, per field read);
 *   <li>the doorbell slots (post_send, bind_mw, wr_complete, req_notify_cq, prefix {@code kick_}) are plain:
 *       mlx5 rings the doorbell from user space, but rxe enters the kernel there (a {@code write(2)} on the
 *       uverbs fd that runs the requester in-line, or {@code ibv_cmd_req_notify_cq}), far from the "as short as
 *       an empty function" that critical requires; one call per posted chain, so the ~2 ns are not measurable;
 *   <li>pointer-returning control slots capture errno (their C contract is NULL + errno), with the capture
 *       segment second, after {@code fn};
 *   <li>other control slots enter the kernel and are plain.
 * </ul>
 * The control slots' handles (the last two) are in {@link ProviderControlDowncalls}.
 *
 * <p>A NULL slot never reaches these handles: callers compare the address with 0 first and throw
 * {@link ProviderSlots#missing}.
 *
 * <p>System property {@value #NO_CRITICAL_PROPERTY}{@code =true} links the critical handles without
 * {@code critical} too: to measure what the option buys (JMH), and for tests that install Java upcall stubs in
 * provider slots (an upcall from a critical downcall is not allowed).
 */
public final class ProviderDowncalls {

    /** Set to {@code true} to link the data-path handles as ordinary (non-critical) downcalls. */
    public static final String NO_CRITICAL_PROPERTY = "dev.panverbs.bindings.noCritical";
    /** Whether the data-path handles were linked with {@code Linker.Option.critical(false)}. */
    public static final boolean CRITICAL = !Boolean.getBoolean(NO_CRITICAL_PROPERTY);

    private ProviderDowncalls() {}

    /**
     * Links a virtual (address-first) handle for a data-path slot that stays in user space in every provider:
     * {@code critical(false)} unless {@value #NO_CRITICAL_PROPERTY} is set. For the slots of other providers'
     * structs ({@code mlx5.Mlx5dvInlineWr}), so that every provider slot follows this one policy.
     */
    public static MethodHandle hot(FunctionDescriptor descriptor) {
        return CRITICAL
                ? Linker.nativeLinker().downcallHandle(descriptor, Linker.Option.critical(false))
                : Linker.nativeLinker().downcallHandle(descriptor);
    }

    /** Links a plain virtual handle: for slots that may enter the kernel (doorbells, control verbs). */
    static MethodHandle control(FunctionDescriptor descriptor) {
        return Linker.nativeLinker().downcallHandle(descriptor);
    }

    /** Slots post_send, bind_mw: doorbell, plain (rxe enters the kernel). */
    private static final MethodHandle KICK_I_PPP = control(ibv_context_ops.post_send.descriptor());

    public static int kick_i_ppp(MemorySegment fn, MemorySegment a0, MemorySegment a1, MemorySegment a2) {
        try {
            return (int) KICK_I_PPP.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * {@link #kick_i_ppp} with the three pointers as addresses ({@code long}: the same argument class in the C ABIs
     * the linker supports): for callers whose arguments are memory they keep alive themselves, so the linker has no
     * segment to check or acquire per call (three segment class and scope checks fewer per post).
     */
    private static final MethodHandle KICK_I_PJJJ = control(FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));

    public static int kick_i_ppp(MemorySegment fn, long a0, long a1, long a2) {
        try {
            return (int) KICK_I_PJJJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots req_notify_cq: plain (rxe: ibv_cmd_req_notify_cq enters the kernel). */
    private static final MethodHandle KICK_I_PI = control(ibv_context_ops.req_notify_cq.descriptor());

    public static int kick_i_pi(MemorySegment fn, MemorySegment a0, int a1) {
        try {
            return (int) KICK_I_PI.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_complete: doorbell, plain (rxe enters the kernel). */
    private static final MethodHandle KICK_I_P = control(ibv_qp_ex.wr_complete.descriptor());

    public static int kick_i_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (int) KICK_I_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots post_recv, post_srq_recv, ibv_wq.post_recv, post_srq_ops (critical). */
    private static final MethodHandle I_PPP = hot(ibv_context_ops.post_send.descriptor());

    public static int i_ppp(MemorySegment fn, MemorySegment a0, MemorySegment a1, MemorySegment a2) {
        try {
            return (int) I_PPP.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** {@link #i_ppp} with the pointers as addresses, as {@link #kick_i_ppp(MemorySegment, long, long, long)}. */
    private static final MethodHandle I_PJJJ = hot(FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG));

    public static int i_ppp(MemorySegment fn, long a0, long a1, long a2) {
        try {
            return (int) I_PJJJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots poll_cq (critical). */
    private static final MethodHandle I_PIP = hot(ibv_context_ops.poll_cq.descriptor());

    /** {@link #i_pip} with the pointers as addresses, as {@link #kick_i_ppp(MemorySegment, long, long, long)}. */
    private static final MethodHandle I_PJIJ = hot(FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));

    public static int i_pip(MemorySegment fn, long a0, int a1, long a2) {
        try {
            return (int) I_PJIJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    public static int i_pip(MemorySegment fn, MemorySegment a0, int a1, MemorySegment a2) {
        try {
            return (int) I_PIP.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Two-argument (pointer, int) slots other than req_notify_cq (critical). */
    private static final MethodHandle I_PI = hot(ibv_context_ops.req_notify_cq.descriptor());

    public static int i_pi(MemorySegment fn, MemorySegment a0, int a1) {
        try {
            return (int) I_PI.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots start_poll (critical). */
    private static final MethodHandle I_PP = hot(ibv_cq_ex.start_poll.descriptor());

    public static int i_pp(MemorySegment fn, MemorySegment a0, MemorySegment a1) {
        try {
            return (int) I_PP.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * Slots next_poll, read_opcode, read_vendor_err, read_byte_len, read_imm_data, read_qp_num, read_src_qp,
     * read_wc_flags, read_slid, read_flow_tag (critical).
     */
    private static final MethodHandle I_P = hot(ibv_qp_ex.wr_complete.descriptor());

    public static int i_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (int) I_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots read_sl, read_dlid_path_bits (critical). */
    private static final MethodHandle B_P = hot(ibv_cq_ex.read_sl.descriptor());

    public static byte b_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (byte) B_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots read_cvlan (critical). */
    private static final MethodHandle S_P = hot(ibv_cq_ex.read_cvlan.descriptor());

    public static short s_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (short) S_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots read_completion_ts, read_completion_wallclock_ns (critical). */
    private static final MethodHandle J_P = hot(ibv_cq_ex.read_completion_ts.descriptor());

    public static long j_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (long) J_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_send, wr_start, wr_abort, end_poll (critical). */
    private static final MethodHandle V_P = hot(ibv_qp_ex.wr_send.descriptor());

    public static void v_p(MemorySegment fn, MemorySegment a0) {
        try {
            V_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots read_tm_info (critical). */
    private static final MethodHandle V_PP = hot(ibv_cq_ex.read_tm_info.descriptor());

    public static void v_pp(MemorySegment fn, MemorySegment a0, MemorySegment a1) {
        try {
            V_PP.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_local_inv, wr_send_imm, wr_send_inv, wr_set_xrc_srqn (critical). */
    private static final MethodHandle V_PI = hot(ibv_qp_ex.wr_local_inv.descriptor());

    public static void v_pi(MemorySegment fn, MemorySegment a0, int a1) {
        try {
            V_PI.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_rdma_read, wr_rdma_write (critical). */
    private static final MethodHandle V_PIJ = hot(ibv_qp_ex.wr_rdma_write.descriptor());

    public static void v_pij(MemorySegment fn, MemorySegment a0, int a1, long a2) {
        try {
            V_PIJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_rdma_write_imm, wr_set_sge (critical). */
    private static final MethodHandle V_PIJI = hot(ibv_qp_ex.wr_rdma_write_imm.descriptor());

    public static void v_piji(MemorySegment fn, MemorySegment a0, int a1, long a2, int a3) {
        try {
            V_PIJI.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_atomic_fetch_add (critical). */
    private static final MethodHandle V_PIJJ = hot(ibv_qp_ex.wr_atomic_fetch_add.descriptor());

    public static void v_pijj(MemorySegment fn, MemorySegment a0, int a1, long a2, long a3) {
        try {
            V_PIJJ.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_atomic_cmp_swp (critical). */
    private static final MethodHandle V_PIJJJ = hot(ibv_qp_ex.wr_atomic_cmp_swp.descriptor());

    public static void v_pijjj(MemorySegment fn, MemorySegment a0, int a1, long a2, long a3, long a4) {
        try {
            V_PIJJJ.invokeExact(fn, a0, a1, a2, a3, a4);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_atomic_write (critical). */
    private static final MethodHandle V_PIJP = hot(ibv_qp_ex.wr_atomic_write.descriptor());

    public static void v_pijp(MemorySegment fn, MemorySegment a0, int a1, long a2, MemorySegment a3) {
        try {
            V_PIJP.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_bind_mw (critical). */
    private static final MethodHandle V_PPIP = hot(ibv_qp_ex.wr_bind_mw.descriptor());

    public static void v_ppip(MemorySegment fn, MemorySegment a0, MemorySegment a1, int a2, MemorySegment a3) {
        try {
            V_PPIP.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_send_tso (critical). */
    private static final MethodHandle V_PPSS = hot(ibv_qp_ex.wr_send_tso.descriptor());

    public static void v_ppss(MemorySegment fn, MemorySegment a0, MemorySegment a1, short a2, short a3) {
        try {
            V_PPSS.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_set_ud_addr (critical). */
    private static final MethodHandle V_PPII = hot(ibv_qp_ex.wr_set_ud_addr.descriptor());

    public static void v_ppii(MemorySegment fn, MemorySegment a0, MemorySegment a1, int a2, int a3) {
        try {
            V_PPII.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_set_inline_data (critical). */
    private static final MethodHandle V_PPJ = hot(ibv_qp_ex.wr_set_inline_data.descriptor());

    public static void v_ppj(MemorySegment fn, MemorySegment a0, MemorySegment a1, long a2) {
        try {
            V_PPJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_set_sge_list, wr_set_inline_data_list (critical). */
    private static final MethodHandle V_PJP = hot(ibv_qp_ex.wr_set_sge_list.descriptor());

    public static void v_pjp(MemorySegment fn, MemorySegment a0, long a1, MemorySegment a2) {
        try {
            V_PJP.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots memcpy_to_dm (critical). */
    private static final MethodHandle I_PJPJ = hot(ibv_dm.memcpy_to_dm.descriptor());

    public static int i_pjpj(MemorySegment fn, MemorySegment a0, long a1, MemorySegment a2, long a3) {
        try {
            return (int) I_PJPJ.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots memcpy_from_dm (critical). */
    private static final MethodHandle I_PPJJ = hot(ibv_dm.memcpy_from_dm.descriptor());

    public static int i_ppjj(MemorySegment fn, MemorySegment a0, MemorySegment a1, long a2, long a3) {
        try {
            return (int) I_PPJJ.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
