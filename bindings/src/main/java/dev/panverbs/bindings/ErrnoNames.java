package dev.panverbs.bindings;

import static dev.panverbs.bindings.verbs.verbs_h.*;

import java.util.Map;

/**
 * Symbolic errno names, keyed by the values jextract generated from {@code <errno.h>} (through
 * {@code verbs.h}), so no errno number is copied by hand. The Linux aliases {@code EWOULDBLOCK} (=
 * {@code EAGAIN}), {@code EDEADLOCK} (= {@code EDEADLK}) and {@code ENOTSUP} (= {@code EOPNOTSUPP}) are left
 * out: each value maps to the name {@code strerror(3)} and the verbs man pages use.
 */
final class ErrnoNames {

    static final Map<Integer, String> BY_VALUE = Map.ofEntries(
                e("E2BIG", E2BIG()), e("EACCES", EACCES()), e("EADDRINUSE", EADDRINUSE()),
                e("EADDRNOTAVAIL", EADDRNOTAVAIL()), e("EADV", EADV()), e("EAFNOSUPPORT", EAFNOSUPPORT()),
                e("EAGAIN", EAGAIN()), e("EALREADY", EALREADY()), e("EBADE", EBADE()), e("EBADF", EBADF()),
                e("EBADFD", EBADFD()), e("EBADMSG", EBADMSG()), e("EBADR", EBADR()), e("EBADRQC", EBADRQC()),
                e("EBADSLT", EBADSLT()), e("EBFONT", EBFONT()), e("EBUSY", EBUSY()), e("ECANCELED", ECANCELED()),
                e("ECHILD", ECHILD()), e("ECHRNG", ECHRNG()), e("ECOMM", ECOMM()),
                e("ECONNABORTED", ECONNABORTED()), e("ECONNREFUSED", ECONNREFUSED()), e("ECONNRESET", ECONNRESET()),
                e("EDEADLK", EDEADLK()), e("EDESTADDRREQ", EDESTADDRREQ()), e("EDOM", EDOM()),
                e("EDOTDOT", EDOTDOT()), e("EDQUOT", EDQUOT()), e("EEXIST", EEXIST()), e("EFAULT", EFAULT()),
                e("EFBIG", EFBIG()), e("EHOSTDOWN", EHOSTDOWN()), e("EHOSTUNREACH", EHOSTUNREACH()),
                e("EHWPOISON", EHWPOISON()), e("EIDRM", EIDRM()), e("EILSEQ", EILSEQ()),
                e("EINPROGRESS", EINPROGRESS()), e("EINTR", EINTR()), e("EINVAL", EINVAL()), e("EIO", EIO()),
                e("EISCONN", EISCONN()), e("EISDIR", EISDIR()), e("EISNAM", EISNAM()),
                e("EKEYEXPIRED", EKEYEXPIRED()), e("EKEYREJECTED", EKEYREJECTED()), e("EKEYREVOKED", EKEYREVOKED()),
                e("EL2HLT", EL2HLT()), e("EL2NSYNC", EL2NSYNC()), e("EL3HLT", EL3HLT()), e("EL3RST", EL3RST()),
                e("ELIBACC", ELIBACC()), e("ELIBBAD", ELIBBAD()), e("ELIBEXEC", ELIBEXEC()),
                e("ELIBMAX", ELIBMAX()), e("ELIBSCN", ELIBSCN()), e("ELNRNG", ELNRNG()), e("ELOOP", ELOOP()),
                e("EMEDIUMTYPE", EMEDIUMTYPE()), e("EMFILE", EMFILE()), e("EMLINK", EMLINK()),
                e("EMSGSIZE", EMSGSIZE()), e("EMULTIHOP", EMULTIHOP()), e("ENAMETOOLONG", ENAMETOOLONG()),
                e("ENAVAIL", ENAVAIL()), e("ENETDOWN", ENETDOWN()), e("ENETRESET", ENETRESET()),
                e("ENETUNREACH", ENETUNREACH()), e("ENFILE", ENFILE()), e("ENOANO", ENOANO()),
                e("ENOBUFS", ENOBUFS()), e("ENOCSI", ENOCSI()), e("ENODATA", ENODATA()), e("ENODEV", ENODEV()),
                e("ENOENT", ENOENT()), e("ENOEXEC", ENOEXEC()), e("ENOKEY", ENOKEY()), e("ENOLCK", ENOLCK()),
                e("ENOLINK", ENOLINK()), e("ENOMEDIUM", ENOMEDIUM()), e("ENOMEM", ENOMEM()), e("ENOMSG", ENOMSG()),
                e("ENONET", ENONET()), e("ENOPKG", ENOPKG()), e("ENOPROTOOPT", ENOPROTOOPT()),
                e("ENOSPC", ENOSPC()), e("ENOSR", ENOSR()), e("ENOSTR", ENOSTR()), e("ENOSYS", ENOSYS()),
                e("ENOTBLK", ENOTBLK()), e("ENOTCONN", ENOTCONN()), e("ENOTDIR", ENOTDIR()),
                e("ENOTEMPTY", ENOTEMPTY()), e("ENOTNAM", ENOTNAM()), e("ENOTRECOVERABLE", ENOTRECOVERABLE()),
                e("ENOTSOCK", ENOTSOCK()), e("ENOTTY", ENOTTY()), e("ENOTUNIQ", ENOTUNIQ()), e("ENXIO", ENXIO()),
                e("EOPNOTSUPP", EOPNOTSUPP()), e("EOVERFLOW", EOVERFLOW()), e("EOWNERDEAD", EOWNERDEAD()),
                e("EPERM", EPERM()), e("EPFNOSUPPORT", EPFNOSUPPORT()), e("EPIPE", EPIPE()), e("EPROTO", EPROTO()),
                e("EPROTONOSUPPORT", EPROTONOSUPPORT()), e("EPROTOTYPE", EPROTOTYPE()), e("ERANGE", ERANGE()),
                e("EREMCHG", EREMCHG()), e("EREMOTE", EREMOTE()), e("EREMOTEIO", EREMOTEIO()),
                e("ERESTART", ERESTART()), e("ERFKILL", ERFKILL()), e("EROFS", EROFS()),
                e("ESHUTDOWN", ESHUTDOWN()), e("ESOCKTNOSUPPORT", ESOCKTNOSUPPORT()), e("ESPIPE", ESPIPE()),
                e("ESRCH", ESRCH()), e("ESRMNT", ESRMNT()), e("ESTALE", ESTALE()), e("ESTRPIPE", ESTRPIPE()),
                e("ETIME", ETIME()), e("ETIMEDOUT", ETIMEDOUT()), e("ETOOMANYREFS", ETOOMANYREFS()),
                e("ETXTBSY", ETXTBSY()), e("EUCLEAN", EUCLEAN()), e("EUNATCH", EUNATCH()), e("EUSERS", EUSERS()),
                e("EXDEV", EXDEV()), e("EXFULL", EXFULL())
    );

    private ErrnoNames() {}

    private static Map.Entry<Integer, String> e(String name, int value) {
        return Map.entry(value, name);
    }
}
