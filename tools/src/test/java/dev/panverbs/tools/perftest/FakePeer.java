package dev.panverbs.tools.perftest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scripted TCP peer for the exchange tests: plays perftest's side of the out-of-band protocol step by step (or
 * misbehaves on purpose), records every byte the tool sends, and runs the tool against itself.
 */
final class FakePeer {
    /** One scripted step; may read and write the socket. */
    interface Step {
        void run(FakePeer peer) throws IOException;
    }

    final List<byte[]> received = new ArrayList<>();
    InputStream in;
    OutputStream out;
    Socket socket;

    /** The outcome of running the tool against a script. */
    record Outcome(int rc, String out, String err, long millis, List<byte[]> received, Throwable peerFailure) { }

    byte[] read(int n) throws IOException {
        byte[] b = in.readNBytes(n);
        received.add(b);
        if (b.length < n) {
            throw new IOException("tool closed after " + b.length + " of " + n + " bytes");
        }
        return b;
    }

    void write(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    /** Server side of one symmetric exchange: read theirs, answer with {@code mine}. */
    byte[] exchange(int size, byte[] mine) throws IOException {
        byte[] theirs = read(size);
        write(mine);
        return theirs;
    }

    static byte[] version(String v) {
        return Arrays.copyOf(v.getBytes(StandardCharsets.US_ASCII), 16);
    }

    static byte[] int32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }

    /** A perftest-like key message with GID (the simulated device is RoCE). */
    static byte[] key(int qpn, int rkey, long vaddr) {
        return new KeyMessage(0, 1, qpn, 0x123456, rkey, vaddr, SimulatedEngine.GID1, 0).encode();
    }

    /** The preamble a real perftest server plays: version, page size, cache line, MTU. */
    static final Step PREAMBLE = p -> {
        p.exchange(16, version("6.06"));
        p.exchange(4, int32(4096));
        p.exchange(4, int32(64));
        p.exchange(2, new byte[] {'3', 0});
    };

    /**
     * Runs {@code test} as a client against this scripted server.
     *
     * @param args the tool's options; the host and -p are added
     */
    static Outcome clientAgainst(PerftestTest test, List<String> args, Step... script) throws Exception {
        FakePeer peer = new FakePeer();
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CompletableFuture<Throwable> done = new CompletableFuture<>();
            Thread t = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = server.accept()) {
                    peer.play(s, script);
                    done.complete(null);
                } catch (Throwable e) {
                    done.complete(e);
                }
            });
            List<String> a = new ArrayList<>(args);
            a.add("-p");
            a.add(Integer.toString(server.getLocalPort()));
            a.add("127.0.0.1");
            return peer.runAgainst(test, a, done, t);
        }
    }

    /** Runs {@code test} as a server on a free port while this peer connects to it and plays {@code script}. */
    static Outcome serverAgainst(PerftestTest test, List<String> args, Step... script) throws Exception {
        FakePeer peer = new FakePeer();
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        CompletableFuture<Throwable> done = new CompletableFuture<>();
        final int p = port;
        Thread t = Thread.ofPlatform().daemon().start(() -> {
            Socket s = null;
            long end = System.nanoTime() + 5_000_000_000L;
            while (s == null && System.nanoTime() < end) {
                try {
                    s = new Socket(InetAddress.getLoopbackAddress(), p);
                } catch (IOException e) {
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException ie) {
                        done.complete(ie);
                        return;
                    }
                }
            }
            try (Socket sock = s) {
                if (sock == null) {
                    throw new IOException("tool never listened on " + p);
                }
                peer.play(sock, script);
                done.complete(null);
            } catch (Throwable e) {
                done.complete(e);
            }
        });
        List<String> a = new ArrayList<>(args);
        a.add("-p");
        a.add(Integer.toString(port));
        return peer.runAgainst(test, a, done, t);
    }

    /** Plays {@code script} on the connection {@code s}. */
    private void play(Socket s, Step... script) throws IOException {
        socket = s;
        in = s.getInputStream();
        out = s.getOutputStream();
        for (Step step : script) {
            step.run(this);
        }
    }

    /** Runs the tool with {@code args} while {@code peerThread} plays; its outcome with what the peer saw. */
    private Outcome runAgainst(PerftestTest test, List<String> args, CompletableFuture<Throwable> done,
                               Thread peerThread) throws Exception {
        Outcome o = runTool(test, args, this);
        Throwable f = done.get(20, TimeUnit.SECONDS);
        peerThread.interrupt();
        return new Outcome(o.rc(), o.out(), o.err(), o.millis(), received, f);
    }

    private static Outcome runTool(PerftestTest test, List<String> args, FakePeer peer) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        long t0 = System.nanoTime();
        int rc;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            List<String> a = new ArrayList<>(args);
            a.add("--jit_warmup=0"); // the script's timing is the peer's; WarmupTest covers the warm-up
            rc = PerftestMain.run(test, test.programName(), a, out, err, () -> new SimulatedEngine("sim0"));
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        return new Outcome(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8), ms,
                peer.received, null);
    }
}
