package dev.panverbs.core.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The rdma-core release this process runs, for working around provider bugs fixed in later releases. rdma-core
 * names its libraries {@code libibverbs.so.1.<ABI>.<release>} (e.g. {@code libibverbs.so.1.14.44.0} in rdma-core
 * 44.0), and the providers always come from the same release as libibverbs (they link against its private ABI), so
 * the file mapped into this process tells the providers' release too.
 */
public final class RdmaCoreVersion {
    private static final Pattern LIBIBVERBS = Pattern.compile("/libibverbs\\.so\\.1\\.\\d+\\.(\\d+)\\.\\d+\\s*$",
            Pattern.MULTILINE);
    private static volatile int major = -1;

    private RdmaCoreVersion() {}

    /** The rdma-core major release (44 for rdma-core 44.0), or -1 when libibverbs is not mapped under that name. */
    public static int major() {
        int m = major;
        if (m < 0) { // not cached: read (again, in case libibverbs was mapped since)
            try {
                m = parse(Files.readString(Path.of("/proc/self/maps")));
            } catch (IOException | RuntimeException e) {
                m = -1;
            }
            major = m;
        }
        return m;
    }

    /** The release in the text of {@code /proc/self/maps}, or -1. */
    static int parse(String maps) {
        Matcher m = LIBIBVERBS.matcher(maps);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }
}
