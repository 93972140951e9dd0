package dev.panverbs.core.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's {@code RLIMIT_MEMLOCK}, read from {@code /proc/self/limits} ("Max locked memory"). Every
 * registered byte (and every CQ/QP/SRQ buffer) is pinned and charged to it, so ENOMEM/EPERM from a
 * registration usually means this limit, not the machine, ran out. Read as text, not through {@code getrlimit(2)}.
 *
 * @param soft the soft limit in bytes, or {@link #UNLIMITED}; {@link #UNKNOWN} if unreadable
 * @param hard the hard limit in bytes, or {@link #UNLIMITED}; {@link #UNKNOWN} if unreadable
 */
public record MemlockLimit(long soft, long hard) {

    /** The value of an {@code unlimited} limit. */
    public static final long UNLIMITED = Long.MAX_VALUE;
    /** The value when {@code /proc/self/limits} could not be read or parsed. */
    public static final long UNKNOWN = -1;

    private static final String ROW = "Max locked memory";

    /** Reads the current limits of this process (they can change at run time: prlimit(1)). */
    public static MemlockLimit current() {
        try {
            return parse(Files.readString(Path.of("/proc/self/limits")));
        } catch (IOException | UncheckedIOException e) {
            return new MemlockLimit(UNKNOWN, UNKNOWN);
        }
    }

    /** Parses the text of a {@code /proc/<pid>/limits} file. */
    public static MemlockLimit parse(String limits) {
        for (String line : limits.split("\n")) {
            if (line.startsWith(ROW)) {
                String[] fields = line.substring(ROW.length()).trim().split("\\s+");
                if (fields.length >= 2) {
                    return new MemlockLimit(value(fields[0]), value(fields[1]));
                }
            }
        }
        return new MemlockLimit(UNKNOWN, UNKNOWN);
    }

    private static long value(String field) {
        if (field.equals("unlimited")) {
            return UNLIMITED;
        }
        try {
            return Long.parseLong(field);
        } catch (NumberFormatException e) {
            return UNKNOWN;
        }
    }

    /** Whether the soft limit is unlimited (then it cannot be why a registration failed). */
    public boolean unlimited() {
        return soft == UNLIMITED;
    }

    /**
     * The hint for a pinned-memory failure, e.g. {@code RLIMIT_MEMLOCK is 64 KiB (hard 64 KiB): registered
     * memory is pinned and counted against it; raise it with 'ulimit -l unlimited' ...}.
     */
    public String hint() {
        if (soft == UNKNOWN) {
            return "RLIMIT_MEMLOCK could not be read from /proc/self/limits; registered memory is pinned and "
                    + "counted against it: check 'ulimit -l' and raise it ('ulimit -l unlimited')";
        }
        if (unlimited()) {
            return "RLIMIT_MEMLOCK is unlimited, so it is not the cause: the device ran out of resources "
                    + "(see max_mr, max_mr_size in DeviceAttributes) or the kernel ran out of memory";
        }
        return "RLIMIT_MEMLOCK is " + Units.bytes(soft) + " (hard " + (hard == UNLIMITED ? "unlimited" : Units.bytes(hard))
                + "): registered memory is pinned and counted against it; raise it with 'ulimit -l unlimited' "
                + "(LimitMEMLOCK=infinity for a systemd service, a memlock line in /etc/security/limits.conf, "
                + "--ulimit memlock=-1 for docker)";
    }
}
