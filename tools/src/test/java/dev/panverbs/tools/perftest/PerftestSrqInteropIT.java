package dev.panverbs.tools.perftest;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code --use-srq} against the C perftest 6.06 on rxe, both ways (the checks of {@link PerftestInteropIT}, whose
 * test method runs here over this matrix): ib_send_bw over RC with one and two QPs sharing the server's SRQ, over
 * UD, and ib_send_lat, where both sides receive through their own SRQ. The side that receives creates the SRQ
 * ({@code max_wr} = rx-depth) and posts rx-depth / QPs receives per QP to it; the wire protocol does not change, so
 * each side may use an SRQ or not independently: both sides pass the flag here, as perftest's users do.
 */
class PerftestSrqInteropIT extends PerftestInteropIT {

    static Stream<Case> matrix() {
        List<Case> cases = new ArrayList<>();
        for (boolean javaServer : new boolean[] {false, true}) {
            cases.add(new Case(PerftestTest.SEND_BW, List.of("--use-srq", "-s", "4096", "-n", "200"), javaServer));
            cases.add(new Case(PerftestTest.SEND_BW, List.of("--use-srq", "-s", "1024", "-n", "200", "-q", "2"),
                    javaServer));
            cases.add(new Case(PerftestTest.SEND_BW, List.of("--use-srq", "-c", "UD", "-s", "1024", "-n", "200"),
                    javaServer));
            cases.add(new Case(PerftestTest.SEND_LAT, List.of("--use-srq", "-s", "64", "-n", "200"), javaServer));
        }
        return cases.stream();
    }
}
