package dev.panverbs.tools.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Drives the client's {@link CreditWindow} and {@link SlotTable} and the server's {@link CreditReturn} the way
 * RpcClient and RpcServer do, over two FIFO queues standing for the RC connection, with a random scheduler.
 * It checks the two properties the flow control exists for: a SEND never arrives at a server without a posted
 * receive buffer (on hardware: no RNR NAK), and the exchange never deadlocks, one-way messages included.
 */
class CreditProtocolModelTest {
    private record Msg(int kind, int arg, int credits) {}

    @ParameterizedTest(name = "credits={0} slots={1} oneWayPercent={2} seed={3}")
    @CsvSource({
        "2, 1, 0, 1", "2, 4, 50, 2", "3, 8, 100, 3", "64, 4, 100, 11", "64, 1, 100, 12", "8, 2, 30, 4", "8, 64, 30, 5", "64, 16, 90, 6",
        "5, 5, 60, 7", "16, 64, 0, 8", "4, 3, 100, 9", "32, 32, 50, 10",
    })
    void neverSendsWithoutAReceiveBufferAndNeverDeadlocks(int credits, int slots, int oneWayPercent, long seed) {
        Random rnd = new Random(seed);
        int operations = 2000;
        CreditWindow window = new CreditWindow(credits, slots);
        SlotTable table = new SlotTable(slots);
        CreditReturn creditReturn = new CreditReturn(CreditWindow.usable(credits, slots));
        // the receives the client keeps posted for server->client messages (RpcClient: 2 * slots + 1)
        int clientReceives = 2 * slots + 1;
        ArrayDeque<Msg> toServer = new ArrayDeque<>();
        ArrayDeque<Msg> toClient = new ArrayDeque<>();
        ArrayDeque<Integer> sendCompletions = new ArrayDeque<>();
        ArrayDeque<Msg> received = new ArrayDeque<>();
        int posted = credits;
        int issued = 0;
        int responses = 0;
        int calls = 0;
        boolean shutdownSent = false;
        boolean shutdownAcked = false;
        int maxInFlightToServer = 0;
        int maxToClient = 0;

        while (!shutdownAcked) {
            List<String> names = new ArrayList<>();
            if (issued < operations && table.inUse() < slots && window.available() > 0) {
                names.add("client send");
            }
            if (issued == operations && table.inUse() == 0 && !shutdownSent) {
                names.add("client shutdown");
            }
            if (!toServer.isEmpty()) {
                names.add("server receive");
            }
            if (!received.isEmpty()) {
                names.add("server handle");
            }
            if (creditReturn.explicitDue()) {
                names.add("server credit");
            }
            if (!toClient.isEmpty()) {
                names.add("client receive");
            }
            assertThat(toClient.size()).as("server->client messages never outnumber the client's receives")
                    .isLessThanOrEqualTo(clientReceives);
            if (!sendCompletions.isEmpty()) {
                names.add("client send completion");
            }
            if (names.isEmpty()) {
                fail("deadlock after " + issued + " operations: credits available " + window.available()
                        + ", in use " + window.inUse() + ", server pending " + creditReturn.pending()
                        + ", slots in use " + table.inUse());
            }
            maxToClient = Math.max(maxToClient, toClient.size());
            String step = names.get(rnd.nextInt(names.size()));
            switch (step) {
                case "client send" -> {
                    boolean oneWay = rnd.nextInt(100) < oneWayPercent;
                    assertThat(window.tryAcquire()).isTrue();
                    int slot = table.tryAcquire(oneWay ? null : r -> { });
                    toServer.add(new Msg(oneWay ? Immediate.ONE_WAY : Immediate.REQUEST, table.requestId(slot), 0));
                    issued++;
                    calls += oneWay ? 0 : 1;
                    maxInFlightToServer = Math.max(maxInFlightToServer, toServer.size());
                }
                case "client shutdown" -> {
                    window.acquireShutdown();
                    toServer.add(new Msg(Immediate.SHUTDOWN, 0, 0));
                    shutdownSent = true;
                }
                case "server receive" -> {
                    Msg m = toServer.poll();
                    assertThat(posted).as("a receive buffer is posted when a SEND arrives").isPositive();
                    posted--;
                    // the SEND is acknowledged: its completion reaches the client
                    if (m.kind() != Immediate.SHUTDOWN) {
                        sendCompletions.add(Immediate.slot(m.arg()));
                    }
                    received.add(m);
                }
                case "server handle" -> {
                    Msg m = received.poll();
                    if (m.kind() == Immediate.SHUTDOWN) {
                        toClient.add(new Msg(Immediate.SHUTDOWN, 0, 0));
                    } else {
                        posted++;
                        creditReturn.reposted();
                        if (m.kind() == Immediate.REQUEST) {
                            toClient.add(new Msg(Immediate.RESPONSE, m.arg(), creditReturn.take()));
                        }
                    }
                }
                case "server credit" -> toClient.add(new Msg(Immediate.CREDIT, creditReturn.take(), 0));
                case "client receive" -> {
                    Msg m = toClient.poll();
                    if (m.kind() == Immediate.SHUTDOWN) {
                        shutdownAcked = true;
                    } else if (m.kind() == Immediate.CREDIT) {
                        window.release(m.arg());
                    } else {
                        window.release(m.credits());
                        table.responseHandled(table.responseArrived(m.arg()));
                        responses++;
                    }
                }
                case "client send completion" -> table.sendCompleted(sendCompletions.poll());
                default -> throw new AssertionError(step);
            }
        }
        assertThat(responses).isEqualTo(calls);
        assertThat(maxInFlightToServer).isLessThanOrEqualTo(credits);
        assertThat(maxToClient).isLessThanOrEqualTo(clientReceives);
        assertThat(table.inUse()).isZero();
    }
}
