package dev.panverbs.core;

import dev.panverbs.bindings.verbs.verbs_h;
import java.util.ArrayList;
import java.util.List;

/** Texts for {@code ibv_rereg_mr}'s flags and {@code enum ibv_rereg_mr_err_code} results. */
final class ReregFailure {

    private ReregFailure() {}

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
