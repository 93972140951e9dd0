package dev.panverbs.core;

import dev.panverbs.bindings.Errno;
import dev.panverbs.bindings.ibverbs.LibIbverbs;
import dev.panverbs.bindings.verbs.verbs_h;
import dev.panverbs.core.internal.Errors;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The {@code ibv_rereg_mr(3)} call of {@link MemoryRegion.Rereg#apply()} and what its
 * {@code enum ibv_rereg_mr_err_code} results mean for the MR.
 */
final class ReregFailure {

    private ReregFailure() {}

    /**
     * Calls {@code ibv_rereg_mr}; a failure throws {@link VerbsException} naming the flags and the failed stage, after
     * {@code closeUnusable} ran when rdma-core documents the MR as unusable (a kernel command failure other than
     * EOPNOTSUPP).
     */
    static void call(MemorySegment handle, int flags, MemorySegment pdHandle, MemorySegment addr, long length,
            int accessMask, Set<Access> access, Runnable closeUnusable) {
        int rc;
        int errnoValue;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocateCapture(arena);
            rc = LibIbverbs.ibv_rereg_mr(errno, handle, flags, pdHandle, addr, length, accessMask);
            errnoValue = Errno.get(errno);
        }
        // DO_FORK_OLD: the new registration is valid, only fork protection of the old range failed
        if (rc == 0 || rc == verbs_h.IBV_REREG_MR_ERR_DO_FORK_OLD()) {
            return;
        }
        int e = errnoValue == 0 ? verbs_h.EINVAL() : errnoValue;
        // EOPNOTSUPP: the provider or the kernel (uverbs checks the driver op first) refused the command
        // before touching the MR, so it stays valid despite IBV_REREG_MR_ERR_CMD
        boolean unsupported = e == verbs_h.EOPNOTSUPP() || e == verbs_h.EPROTONOSUPPORT();
        boolean unusable = !unsupported && (rc == verbs_h.IBV_REREG_MR_ERR_CMD()
                || rc == verbs_h.IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW());
        String call = Errors.call("ibv_rereg_mr", "flags", flagNames(flags), "access", access);
        VerbsException failure = Errors.failure(call, e, describe(rc, unusable));
        if (unusable) {
            try {
                closeUnusable.run();
            } catch (RuntimeException closeFailure) {
                failure.addSuppressed(closeFailure);
            }
        }
        throw failure;
    }

    static List<String> flagNames(int flags) {
        List<String> names = new ArrayList<>(3);
        if ((flags & verbs_h.IBV_REREG_MR_CHANGE_TRANSLATION()) != 0) {
            names.add("CHANGE_TRANSLATION");
        }
        if ((flags & verbs_h.IBV_REREG_MR_CHANGE_PD()) != 0) {
            names.add("CHANGE_PD");
        }
        if ((flags & verbs_h.IBV_REREG_MR_CHANGE_ACCESS()) != 0) {
            names.add("CHANGE_ACCESS");
        }
        return names;
    }

    /** What an {@code IBV_REREG_MR_ERR_*} code says about the MR afterwards. */
    static String describe(int code, boolean closed) {
        if (code == verbs_h.IBV_REREG_MR_ERR_INPUT()) {
            return "IBV_REREG_MR_ERR_INPUT: invalid input, the MR is unchanged and still valid";
        }
        if (code == verbs_h.IBV_REREG_MR_ERR_DONT_FORK_NEW()) {
            return "IBV_REREG_MR_ERR_DONT_FORK_NEW: fork protection of the new range failed, the MR is unchanged";
        }
        String after = closed ? "the MR must not be used: it was closed" : "refused before any change: the MR is unchanged";
        if (code == verbs_h.IBV_REREG_MR_ERR_CMD()) {
            return "IBV_REREG_MR_ERR_CMD: the kernel command failed; " + after;
        }
        if (code == verbs_h.IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW()) {
            return "IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW: the kernel command failed; " + after;
        }
        return "ibv_rereg_mr returned " + code;
    }
}
