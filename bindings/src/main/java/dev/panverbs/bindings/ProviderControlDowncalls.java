package dev.panverbs.bindings;

import dev.panverbs.bindings.verbs.ibv_context_ops;
import dev.panverbs.bindings.verbs.verbs_context;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The virtual ("address-first") downcall handles of the control slots providers install in
 * {@code ibv_context.ops} and {@code verbs_context} (create, destroy, query, modify): one {@code static final}
 * handle per C signature, named as in {@link ProviderDowncalls}, the function address {@code fn} first. They enter
 * the kernel, so none is {@code critical}; pointer-returning slots ({@code p_*}) capture errno (their C contract is
 * NULL + errno), with the capture segment second, after {@code fn}. A NULL slot never reaches these handles:
 * callers compare the address with 0 first.
 */
public final class ProviderControlDowncalls {

    private ProviderControlDowncalls() {}

    private static MethodHandle capturing(FunctionDescriptor descriptor) {
        return Linker.nativeLinker().downcallHandle(descriptor, Errno.CAPTURE);
    }

    private static MethodHandle control(FunctionDescriptor descriptor) {
        return ProviderDowncalls.control(descriptor);
    }

    /** Slots alloc_mw (captures errno). */
    private static final MethodHandle P_PI = capturing(ibv_context_ops.alloc_mw.descriptor());

    public static MemorySegment p_pi(MemorySegment fn, MemorySegment errno, MemorySegment a0, int a1) {
        try {
            return (MemorySegment) P_PI.invokeExact(fn, errno, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots alloc_null_mr (captures errno). */
    private static final MethodHandle P_P = capturing(verbs_context.alloc_null_mr.descriptor());

    public static MemorySegment p_p(MemorySegment fn, MemorySegment errno, MemorySegment a0) {
        try {
            return (MemorySegment) P_P.invokeExact(fn, errno, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * Slots create_qp_ex, create_cq_ex, create_srq_ex, open_qp, open_xrcd, alloc_td, alloc_parent_domain,
     * alloc_dm, create_wq, create_rwq_ind_table, create_counters, create_flow_action_esp, ibv_create_flow
     * (captures errno).
     */
    private static final MethodHandle P_PP = capturing(verbs_context.create_qp_ex.descriptor());

    public static MemorySegment p_pp(MemorySegment fn, MemorySegment errno, MemorySegment a0, MemorySegment a1) {
        try {
            return (MemorySegment) P_PP.invokeExact(fn, errno, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots reg_dm_mr (captures errno). */
    private static final MethodHandle P_PPJJI = capturing(verbs_context.reg_dm_mr.descriptor());

    public static MemorySegment p_ppjji(
            MemorySegment fn, MemorySegment errno, MemorySegment a0, MemorySegment a1, long a2, long a3, int a4) {
        try {
            return (MemorySegment) P_PPJJI.invokeExact(fn, errno, a0, a1, a2, a3, a4);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * Slots dealloc_mw, close_xrcd, dealloc_td, free_dm, destroy_wq, destroy_rwq_ind_table, destroy_counters,
     * destroy_flow_action, ibv_destroy_flow (not critical).
     */
    private static final MethodHandle CTL_I_P = control(verbs_context.close_xrcd.descriptor());

    public static int ctl_i_p(MemorySegment fn, MemorySegment a0) {
        try {
            return (int) CTL_I_P.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * Slots modify_cq, get_srq_num, query_rt_values, modify_qp_rate_limit, modify_wq, modify_flow_action_esp (not
     * critical).
     */
    private static final MethodHandle CTL_I_PP = control(verbs_context.modify_cq.descriptor());

    public static int ctl_i_pp(MemorySegment fn, MemorySegment a0, MemorySegment a1) {
        try {
            return (int) CTL_I_PP.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots attach_counters_point_flow (not critical). */
    private static final MethodHandle CTL_I_PPP = control(verbs_context.attach_counters_point_flow.descriptor());

    public static int ctl_i_ppp(MemorySegment fn, MemorySegment a0, MemorySegment a1, MemorySegment a2) {
        try {
            return (int) CTL_I_PPP.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots query_port (not critical). */
    private static final MethodHandle CTL_I_PBPJ = control(verbs_context.query_port.descriptor());

    public static int ctl_i_pbpj(MemorySegment fn, MemorySegment a0, byte a1, MemorySegment a2, long a3) {
        try {
            return (int) CTL_I_PBPJ.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots query_device_ex (not critical). */
    private static final MethodHandle CTL_I_PPPJ = control(verbs_context.query_device_ex.descriptor());

    public static int ctl_i_pppj(MemorySegment fn, MemorySegment a0, MemorySegment a1, MemorySegment a2, long a3) {
        try {
            return (int) CTL_I_PPPJ.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots advise_mr (not critical). */
    private static final MethodHandle CTL_I_PIIPI = control(verbs_context.advise_mr.descriptor());

    public static int ctl_i_piipi(MemorySegment fn, MemorySegment a0, int a1, int a2, MemorySegment a3, int a4) {
        try {
            return (int) CTL_I_PIIPI.invokeExact(fn, a0, a1, a2, a3, a4);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots read_counters (not critical). */
    private static final MethodHandle CTL_I_PPII = control(verbs_context.read_counters.descriptor());

    public static int ctl_i_ppii(MemorySegment fn, MemorySegment a0, MemorySegment a1, int a2, int a3) {
        try {
            return (int) CTL_I_PPII.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
