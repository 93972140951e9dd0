package dev.panverbs.tools.cm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * Waits for a server under test to listen before its client starts (rping and udaddy clients do not retry): polls
 * iproute2's {@code rdma resource show cm_id} for an ID in state LISTEN on the port. A fixed pause was not enough on
 * a loaded emulated guest (the C server was not listening yet: the client got reject reason 8).
 */
final class CmListeners {
    private CmListeners() {}

    /** Returns once some rdma_cm ID listens on {@code port} (any port space), or after 60 s (the client then fails). */
    static void await(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        String suffix = ":" + port;
        while (System.nanoTime() < deadline) {
            String table;
            try {
                Process p = new ProcessBuilder("rdma", "resource", "show", "cm_id").redirectErrorStream(true).start();
                table = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    Thread.sleep(1500); // no usable rdma tool: the old fixed pause
                    return;
                }
            } catch (IOException noTool) {
                Thread.sleep(1500);
                return;
            }
            for (String line : table.split("\n")) {
                if (line.contains("state LISTEN") && (line.contains(suffix + " ") || line.endsWith(suffix))) {
                    return;
                }
            }
            Thread.sleep(200);
        }
    }
}
