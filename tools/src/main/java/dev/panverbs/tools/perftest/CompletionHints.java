package dev.panverbs.tools.perftest;

/** What a failed work completion usually means in a perftest run, for the line after perftest's own report. */
final class CompletionHints {
    private CompletionHints() { }

    static String hint(String statusName) {
        return switch (statusName) {
            case "RETRY_EXC_ERR" -> "the peer stopped acknowledging; is it still running, and do both sides use "
                    + "the same link, GID (-x) and MTU?";
            case "RNR_RETRY_EXC_ERR" -> "the peer had no receive posted; is it running the same SEND test with the "
                    + "same -n, -q and -s?";
            case "REM_ACCESS_ERR" -> "the peer refused the remote access; do both sides run the same test (write, "
                    + "read or send) with the same -s/-a?";
            case "REM_INV_REQ_ERR" -> "the peer rejected the request; do both sides run the same test with the same "
                    + "-s, -a and -c?";
            case "LOC_LEN_ERR", "REM_OP_ERR" -> "message larger than the receive buffer; use the same -s/-a on both "
                    + "sides";
            case "WR_FLUSH_ERR" -> "the QP had already failed; see the first error";
            case "LOC_PROT_ERR", "LOC_ACCESS_ERR" -> "local memory key or access problem (a panverbs bug; please "
                    + "report it with --debug output)";
            default -> "see ibv_wc_status_str(3)";
        };
    }
}
