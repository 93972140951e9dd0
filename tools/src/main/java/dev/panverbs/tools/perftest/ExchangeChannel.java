package dev.panverbs.tools.perftest;

import java.io.EOFException;
import java.io.IOException;
import java.io.PushbackInputStream;
import java.io.OutputStream;
import java.net.BindException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * perftest's out-of-band TCP channel ("Data ex. method : Ethernet"): one connection, fixed-size messages, every
 * exchange symmetric. The client writes its message and then reads the peer's; the server reads and then writes.
 * Each message leaves in a single {@code write} (the C side reads it with a single {@code read} and does not
 * loop), and every read here has a deadline, so a peer that stalls, dribbles, closes or sends the wrong amount
 * ends the test with a message instead of a hang.
 *
 * <p>Message sequence (6.06, no -R/-z): version (16 bytes), page size (4, big endian), cache line size (4), MTU
 * (2), then {@link KeyMessage}s whose count and order depend on the test (see {@link ExchangeSteps}), then for
 * unidirectional BW tests the client's {@link BwReport}, then a last key message and {@code "done\0"}.
 *
 * <p>Not thread-safe; owned by the thread that runs the test.
 */
final class ExchangeChannel extends ExchangeTransport {
    /** Size of the version message ({@code MAX_VERSION}). */
    static final int VERSION_SIZE = 16;

    private final Socket socket;
    /** The socket's stream; {@link #peerClosed} puts back the byte it reads ahead. */
    private final PushbackInputStream in;
    private final OutputStream out;

    private ExchangeChannel(Socket socket, boolean client, long defaultTimeoutMillis) throws IOException {
        super(client, defaultTimeoutMillis);
        this.socket = socket;
        socket.setTcpNoDelay(true); // each message goes out at once, in one segment
        this.in = new PushbackInputStream(socket.getInputStream(), 1);
        this.out = socket.getOutputStream();
    }

    /** Connection setup failed; {@link #getMessage()} holds perftest's lines plus a hint. */
    static final class ConnectException extends Exception {
        private static final long serialVersionUID = 1L;

        ConnectException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Server side: listens on {@code port} (all IPv4 addresses, or {@code sourceIp}), accepts one client and
     * stops listening, as {@code ethernet_server_connect} does.
     *
     * @param acceptTimeoutMillis 0 waits for a client forever, like perftest
     * @param bound               called with the listening port once the socket is bound (for --loopback)
     */
    static ExchangeChannel accept(String sourceIp, int port, long acceptTimeoutMillis, long timeoutMillis,
                                  java.util.function.IntConsumer bound) throws ConnectException {
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            InetAddress bindAddress = sourceIp == null ? InetAddress.getByName("0.0.0.0")
                    : InetAddress.getByName(sourceIp);
            try {
                server.bind(new InetSocketAddress(bindAddress, port), 1);
            } catch (BindException e) {
                throw new ConnectException("Couldn't listen to port " + port + "\n"
                        + "Unable to open file descriptor for socket connection Unable to init the socket connection\n"
                        + " (" + e.getMessage() + ": is another server using TCP port " + port
                        + "? choose another with -p on both sides)", e);
            } catch (IllegalArgumentException e) {
                throw new ConnectException("Couldn't listen to port " + port + " (" + e.getMessage() + ": -p takes "
                        + "a TCP port, 1 to 65535)", e);
            }
            if (bound != null) {
                bound.accept(server.getLocalPort());
            }
            server.setSoTimeout((int) Math.min(Integer.MAX_VALUE, acceptTimeoutMillis));
            Socket s;
            try {
                s = server.accept();
            } catch (SocketTimeoutException e) {
                throw new ConnectException("accept() failed: no client connected within "
                        + (acceptTimeoutMillis / 1000) + " s", e);
            }
            return new ExchangeChannel(s, false, timeoutMillis);
        } catch (UnknownHostException e) {
            throw new ConnectException("Name or service not known for " + sourceIp + ":" + port, e);
        } catch (IOException e) {
            throw new ConnectException("Couldn't listen to port " + port + " (" + e.getMessage() + ")", e);
        }
    }

    /** Client side: connects to the server's first reachable IPv4 address, as {@code ethernet_client_connect}. */
    static ExchangeChannel connect(String host, int port, String sourceIp, long timeoutMillis)
            throws ConnectException {
        InetAddress[] addresses;
        try {
            addresses = Arrays.stream(InetAddress.getAllByName(host)).filter(a -> a instanceof Inet4Address)
                    .toArray(InetAddress[]::new);
        } catch (UnknownHostException e) {
            throw new ConnectException("Name or service not known for " + host + ":" + port + "\n"
                    + "Problem in resolving basic address and port\n"
                    + "Unable to open file descriptor for socket connection Unable to init the socket connection", e);
        }
        if (port <= 0 || port > 0xffff) { // perftest's connect fails on these too, later and less clearly
            throw new ConnectException("Couldn't connect to " + host + ":" + port + "\n"
                    + "Unable to open file descriptor for socket connection Unable to init the socket connection\n"
                    + " (-p " + port + " is not a TCP port: use 1 to 65535, the same on both sides)", null);
        }
        IOException last = null;
        for (InetAddress a : addresses) {
            Socket s = new Socket();
            try {
                if (sourceIp != null) {
                    s.bind(new InetSocketAddress(InetAddress.getByName(sourceIp), 0));
                }
                s.connect(new InetSocketAddress(a, port), (int) Math.min(Integer.MAX_VALUE, timeoutMillis));
                return new ExchangeChannel(s, true, timeoutMillis);
            } catch (IOException | IllegalArgumentException e) {
                last = e instanceof IOException io ? io : new IOException(e.getMessage(), e);
                try {
                    s.close();
                } catch (IOException ignored) {
                    // the attempt failed already; nothing to release
                }
            }
        }
        throw new ConnectException("Couldn't connect to " + host + ":" + port + "\n"
                + "Unable to open file descriptor for socket connection Unable to init the socket connection\n"
                + " (" + (last == null ? "no IPv4 address for " + host : last.getMessage())
                + ": is the server side running and listening on TCP port " + port + "? start it first)", last);
    }

    @Override
    boolean binaryKeys() {
        return false;
    }

    @Override
    void send(byte[] message, String step) {
        try {
            out.write(message);
            out.flush();
        } catch (IOException e) {
            throw new ExchangeException("the peer closed the connection before the " + step + " exchange ("
                    + e.getMessage() + "); look at its output for the reason", e);
        }
    }

    @Override
    byte[] receive(int size, String step, long timeoutMillis) {
        byte[] buf = new byte[size];
        int got = 0;
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        try {
            while (got < size) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    throw new SocketTimeoutException();
                }
                socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
                int n = in.read(buf, got, size - got);
                if (n < 0) {
                    throw new EOFException();
                }
                got += n;
            }
            return buf;
        } catch (SocketTimeoutException e) {
            throw new ExchangeException("the peer sent nothing for " + seconds(timeoutMillis) + " during the "
                    + step + " exchange (" + progress(buf, got, size) + "); " + stallHint(buf, got, size), e);
        } catch (EOFException e) {
            throw new ExchangeException("the peer closed the connection during the " + step + " exchange ("
                    + progress(buf, got, size) + "); " + closeHint(buf, got), e);
        } catch (IOException e) {
            throw new ExchangeException("the connection to the peer failed during the " + step + " exchange: "
                    + e.getMessage() + " (" + progress(buf, got, size) + ")", e);
        }
    }

    @Override
    boolean peerClosed() {
        try {
            if (in.available() > 0) {
                return false;
            }
            socket.setSoTimeout(1);
            int b = in.read();
            if (b < 0) {
                return true;
            }
            in.unread(b); // the start of the peer's next message: the next receive reads it
            return false;
        } catch (SocketTimeoutException e) {
            return false; // open, nothing sent: the usual case while a test runs
        } catch (IOException e) {
            return true; // reset: the peer exited with bytes of ours unread
        }
    }

    private static String progress(byte[] buf, int got, int size) {
        return got == 0 ? "nothing received of " + size + " bytes"
                : "received " + got + " of " + size + " bytes: " + describe(buf, got);
    }

    private static String stallHint(byte[] buf, int got, int size) {
        if (size == KeyMessage.SIZE_GID && got == KeyMessage.SIZE && buf[got - 1] == 0) {
            return "the peer sends key messages without a GID (59 bytes) and this side expects them with one "
                    + "(108 bytes): give both sides the same -x, or check that both use the same link type";
        }
        return "is the peer stuck, or running another test or other options (-q, -a, -n, -D, -x must match)?";
    }

    private static String closeHint(byte[] buf, int got) {
        if (got >= 4 && new String(buf, 0, 4, StandardCharsets.US_ASCII).equals("done")) {
            return "the peer finished its test (it sent \"done\") while this side expected more: the two sides run "
                    + "different tests or different options (-q, -a, -n, -D, -s)";
        }
        return "look at the peer's output for the reason; if it is fine, the two sides run different tests or "
                + "options";
    }

    private static String seconds(long millis) {
        return millis % 1000 == 0 ? (millis / 1000) + " s" : millis + " ms";
    }

    /** Printable rendering of received bytes for diagnostics: ASCII with C escapes, at most 64 bytes. */
    static String describe(byte[] b, int n) {
        StringBuilder s = new StringBuilder("\"");
        int shown = Math.min(n, 64);
        for (int i = 0; i < shown; i++) {
            int c = b[i] & 0xff;
            if (c == 0) {
                s.append("\\0");
            } else if (c == '"' || c == '\\') {
                s.append('\\').append((char) c);
            } else if (c >= 0x20 && c < 0x7f) {
                s.append((char) c);
            } else {
                s.append(String.format("\\x%02x", c));
            }
        }
        s.append('"');
        if (n > shown) {
            s.append("...");
        }
        return s.toString();
    }

    /**
     * Ends the exchange as perftest does after its last key message: writes {@code "done\0"} and closes. The
     * peer's "done" is never read (perftest does not read it, and newer perftest no longer sends it), and a peer
     * that has already closed is fine.
     */
    @Override
    void sendDoneAndClose() {
        try {
            out.write("done\0".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            socket.shutdownOutput();
            // Give the peer's own "done" a moment to arrive so that closing does not answer it with a reset.
            socket.setSoTimeout(200);
            in.readNBytes(5);
        } catch (IOException e) {
            // EPIPE/ECONNRESET: the peer closed first, which is normal at this point
        } finally {
            close();
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a socket we no longer use; nothing to report
        }
    }
}
