package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.BeforeAll;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * -R/--rdma_cm and -z/--comm_rdma_cm against the C perftest 6.06 on rxe, both ways, through the checks of
 * {@link PerftestInteropIT} (whose test method runs here over this matrix): all six programs with -R, -R -c UD for
 * ib_send_bw and ib_send_lat (RDMA_PS_UDP: the SIDR reply's address, and in the latency test the client's
 * SEND_WITH_IMM giving the server its address), the three BW programs with -R -q 2 (one rdma_cm connection per QP,
 * ib_write_bw's both ways; perftest's latency tests take one QP), ib_send_bw -R --use-srq -q 2 both ways (two
 * rdma_cm QPs on one SRQ), -R -T (the
 * type of service set on the client's connections, printed by both), and -z (the exchange
 * over rdma_cm, the QPs connected from the key messages). With -R the exchange runs over an rdma_cm RC connection as
 * binary {@code struct pingpong_dest} SENDs, so every passing case proves that channel byte for byte (versions,
 * system data, MTU, keys, the BW report the server prints, the syncs) as well as the QPs rdma_cm connected (the run
 * itself). Both sides must print {@code rdma_cm QPs : ON} / {@code Data ex. method : rdma_cm} alike.
 *
 * <p>rdma_cm resolves the device by IP address, so the client connects to rxe0's address (PANVERBS_ADDR).
 */
class PerftestRdmaCmInteropIT extends PerftestInteropIT {
    private static String addr;

    @BeforeAll
    static void address() {
        addr = System.getenv("PANVERBS_ADDR");
        assumeTrue(addr != null, "rdma_cm ITs need PANVERBS_ADDR (testbed/test sets it)");
    }

    @Override
    String host() {
        return addr;
    }

    static Stream<Case> matrix() {
        List<Case> cases = new ArrayList<>();
        for (boolean javaServer : new boolean[] {false, true}) {
            for (PerftestTest t : List.of(PerftestTest.WRITE_BW, PerftestTest.READ_BW, PerftestTest.SEND_BW)) {
                cases.add(new Case(t, List.of("-R", "-s", "4096", "-n", "200"), javaServer));
            }
            for (PerftestTest t : List.of(PerftestTest.WRITE_LAT, PerftestTest.READ_LAT, PerftestTest.SEND_LAT)) {
                cases.add(new Case(t, List.of("-R", "-s", "2", "-n", "200"), javaServer));
            }
            // UD over rdma_cm (RDMA_PS_UDP): the client's address from the SIDR reply; in a latency test the
            // server's from the client's SEND_WITH_IMM
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-R", "-c", "UD", "-s", "1024", "-n", "200"),
                    javaServer));
            cases.add(new Case(PerftestTest.SEND_LAT, List.of("-R", "-c", "UD", "-s", "64", "-n", "200"),
                    javaServer));
            cases.add(new Case(PerftestTest.WRITE_BW, List.of("-R", "-s", "4096", "-n", "100", "-q", "2"),
                    javaServer));
            // the two rdma_cm QPs take their receives from one SRQ (rdma_create_qp with ibv_qp_init_attr.srq)
            cases.add(new Case(PerftestTest.SEND_BW, List.of("-R", "--use-srq", "-s", "4096", "-n", "100", "-q", "2"),
                    javaServer));
            cases.add(new Case(PerftestTest.SEND_LAT, List.of("-z", "-s", "2", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.READ_BW, List.of("-R", "-T", "32", "-s", "4096", "-n", "100"),
                    javaServer));
        }
        // the C server direction only: the other -q 2 programs, -z with a BW test, --out_json
        for (PerftestTest t : List.of(PerftestTest.READ_BW, PerftestTest.SEND_BW)) {
            cases.add(new Case(t, List.of("-R", "-s", "4096", "-n", "100", "-q", "2"), false));
        }
        cases.add(new Case(PerftestTest.WRITE_BW, List.of("-z", "-s", "4096", "-n", "200"), false));
        cases.add(new Case(PerftestTest.WRITE_BW, List.of("-R", "-s", "4096", "-n", "100", "--out_json"), false));
        return cases.stream();
    }
}
