package dev.panverbs.bindings;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The per-WR and per-completion slots of {@code ibv_qp_ex} and {@code ibv_cq_ex} ({@code ibv_wr_*},
 * {@code start/next/end_poll}, the {@code ibv_wc_read_*} readers) with their object pointer ({@code struct ibv_qp_ex *},
 * {@code struct ibv_cq_ex *}) passed as its address, a {@code long}: the same C call (a pointer and a 64-bit integer
 * travel in the same register class on every FFM platform), without the linker's per-argument segment work (null and
 * heap checks, the scope's acquire and release) for memory that is not a Java-managed segment anyway: the struct is
 * the provider's, alive while its QP or CQ is, which the callers' open batch or poll pass guarantees (as for the
 * {@link ProviderDowncalls} twins, whose {@code ibv_qp_ex}/{@code ibv_cq_ex} segment is a global-scope view). Fewer
 * instructions per call, and fewer C2 IR nodes, so more of a caller's loop fits C2's inlining budget.
 *
 * <p>Names as in {@link ProviderDowncalls}, with {@code a} for a pointer passed as an address. Linked as that class's
 * hot handles ({@link ProviderDowncalls#hot}: {@code critical(false)} unless disabled), except the doorbell
 * {@code kick_i_a} ({@code wr_complete}), plain as {@link ProviderDowncalls#kick_i_p}.
 */
public final class AddressDowncalls {
    private AddressDowncalls() {}

    private static final MethodHandle V_A = ProviderDowncalls.hot(FunctionDescriptor.ofVoid(JAVA_LONG));
    private static final MethodHandle V_AI = ProviderDowncalls.hot(FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT));
    private static final MethodHandle V_AIJ = ProviderDowncalls.hot(
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG));
    private static final MethodHandle V_AIJI = ProviderDowncalls.hot(
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle I_A = ProviderDowncalls.hot(FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    private static final MethodHandle I_AP = ProviderDowncalls.hot(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
    private static final MethodHandle I_AA = ProviderDowncalls.hot(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle KICK_I_A = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG));

    /** Slots wr_send, wr_start, wr_abort, end_poll. */
    public static void v_a(MemorySegment fn, long a0) {
        try {
            V_A.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_local_inv, wr_send_imm, wr_send_inv, wr_set_xrc_srqn. */
    public static void v_ai(MemorySegment fn, long a0, int a1) {
        try {
            V_AI.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_rdma_read, wr_rdma_write. */
    public static void v_aij(MemorySegment fn, long a0, int a1, long a2) {
        try {
            V_AIJ.invokeExact(fn, a0, a1, a2);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_rdma_write_imm, wr_set_sge. */
    public static void v_aiji(MemorySegment fn, long a0, int a1, long a2, int a3) {
        try {
            V_AIJI.invokeExact(fn, a0, a1, a2, a3);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots next_poll and the int readers (read_opcode, read_byte_len, ...). */
    public static int i_a(MemorySegment fn, long a0) {
        try {
            return (int) I_A.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots start_poll (the caller's attr stays a segment: its scope is checked). */
    public static int i_ap(MemorySegment fn, long a0, MemorySegment a1) {
        try {
            return (int) I_AP.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /**
     * Slots start_poll with its {@code attr} as an address too: for an {@code attr} that is never freed (global-arena
     * memory), so there is no scope to check or acquire.
     */
    public static int i_aa(MemorySegment fn, long a0, long a1) {
        try {
            return (int) I_AA.invokeExact(fn, a0, a1);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }

    /** Slots wr_complete: the doorbell, plain (rxe enters the kernel). */
    public static int kick_i_a(MemorySegment fn, long a0) {
        try {
            return (int) KICK_I_A.invokeExact(fn, a0);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw Downcalls.unreachable(t);
        }
    }
}
