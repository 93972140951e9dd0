package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A run whose data path fails ends as perftest 6.06's {@code main} ends when its {@code run_iter_*} function fails:
 * write_bw and read_bw print " Failed to complete run_iter_bw function successfully" and exit 1 (read_bw with -a
 * exits 17 without it), write_lat prints "Test exited with Error" and exits 1, send_bw, send_lat and read_lat exit 17.
 * The scripted server ({@link FakePeer}) sends a key message naming a QP and memory it does not have, so the
 * simulated device completes the first WR with an error (write_lat: the peer's write never comes).
 */
@Timeout(60)
class RunIterFailureTest {
    /** A key naming QP 1 and rkey 0xbad: no such QP or region on the simulated device. */
    private static final byte[] BAD_KEY = FakePeer.key(1, 0xbad, 0x1000);

    private static FakePeer.Outcome clientAgainstBadKeys(PerftestTest test, int keyMessages, String... more)
            throws Exception {
        List<String> args = ItSupport.concat(MisbehavingPeerTest.FAST, more);
        return FakePeer.clientAgainst(test, args, FakePeer.PREAMBLE, p -> {
            for (int i = 0; i < keyMessages; i++) {
                p.exchange(108, BAD_KEY);
            }
        }, p -> MisbehavingPeerTest.sleep(3_000));
    }

    private static void assertEnds(FakePeer.Outcome o, int status, String lastLine) {
        assertThat(o.err()).as("no stack trace").doesNotContain("\tat ");
        assertThat(o.rc()).as(o.err()).isEqualTo(status);
        assertThat(o.err()).endsWith(lastLine);
    }

    @Test
    void writeBwPrintsRunIterBwsLineAndExits1() throws Exception {
        // the address, the printed remote address, the sync after RTR
        FakePeer.Outcome o = clientAgainstBadKeys(PerftestTest.WRITE_BW, 3);
        assertThat(o.err()).contains(" Completion with error at client\n");
        assertEnds(o, 1, "(REM_ACCESS_ERR: " + CompletionHints.hint("REM_ACCESS_ERR")
                + ")\n Failed to complete run_iter_bw function successfully\n");
    }

    @Test
    void readBwAllSizesExits17WithoutTheLine() throws Exception {
        FakePeer.Outcome o = clientAgainstBadKeys(PerftestTest.READ_BW, 3, "-a");
        assertThat(o.err()).contains(" Completion with error at client\n");
        assertEnds(o, 17, ")\n");
        assertThat(o.err()).doesNotContain("run_iter_bw");
    }

    @Test
    void sendBwExits17() throws Exception {
        // the address, the sync after RTR, the printed remote address, the pre-run sync
        FakePeer.Outcome o = clientAgainstBadKeys(PerftestTest.SEND_BW, 4);
        assertThat(o.err()).contains(" Completion with error at client\n");
        assertEnds(o, 17, ")\n");
    }

    @Test
    void writeLatPrintsTestExitedWithErrorAndExits1() throws Exception {
        // the first sync, the address, the printed remote address, the sync after RTR; the peer never writes back
        FakePeer.Outcome o = clientAgainstBadKeys(PerftestTest.WRITE_LAT, 4);
        assertEnds(o, 1, "\nTest exited with Error\n");
    }
}
