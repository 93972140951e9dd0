package dev.panverbs.tools.perftest;

/** Names of the errno values a post verb can return, for messages ({@code ibv_post_send(3)} lists them). */
final class Errno {
    private Errno() { }

    static String describe(int errno) {
        String name = switch (errno) {
            case 1 -> "EPERM";
            case 5 -> "EIO";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 14 -> "EFAULT";
            case 16 -> "EBUSY";
            case 22 -> "EINVAL";
            case 28 -> "ENOSPC";
            case 95 -> "EOPNOTSUPP";
            default -> "errno " + errno;
        };
        String meaning = switch (errno) {
            case 12 -> "send queue full or out of memory";
            case 22 -> "invalid work request";
            case 14 -> "bad address";
            default -> "";
        };
        return meaning.isEmpty() ? name : name + ", " + meaning;
    }
}
