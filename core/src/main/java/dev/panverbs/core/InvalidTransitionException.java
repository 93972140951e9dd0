package dev.panverbs.core;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A queue-pair modification that {@code ibv_modify_qp} would reject with {@code EINVAL}, detected in Java against
 * the spec's state table ({@link QueuePairTransitions}) before the kernel sees it: the transition
 * {@code current -> next} is not allowed, or required attributes are {@linkplain #missing() missing}, or attributes
 * are given that the transition does not accept ({@linkplain #extra() extra}).
 */
public class InvalidTransitionException extends VerbsException {
    private static final long serialVersionUID = 1L;

    private final transient QueuePairType type;
    private final transient QueuePairState current;
    private final transient QueuePairState next;
    private final transient Set<QueuePairAttribute> missing;
    private final transient Set<QueuePairAttribute> extra;

    /**
     * @param type    the QP's transport type
     * @param current the QP's current state
     * @param next    the requested state
     * @param missing required attributes that were not set
     * @param extra   attributes that were set but this transition does not accept
     */
    public InvalidTransitionException(QueuePairType type, QueuePairState current, QueuePairState next,
                                      Set<QueuePairAttribute> missing, Set<QueuePairAttribute> extra) {
        super("ibv_modify_qp(" + type + ", " + current + " -> " + next + ")",
                message(type, current, next, missing, extra));
        this.type = type;
        this.current = current;
        this.next = next;
        this.missing = Collections.unmodifiableSet(copy(missing));
        this.extra = Collections.unmodifiableSet(copy(extra));
    }

    private static EnumSet<QueuePairAttribute> copy(Set<QueuePairAttribute> s) {
        return s.isEmpty() ? EnumSet.noneOf(QueuePairAttribute.class) : EnumSet.copyOf(s);
    }

    private static String message(QueuePairType type, QueuePairState current, QueuePairState next,
                                  Set<QueuePairAttribute> missing, Set<QueuePairAttribute> extra) {
        if (!QueuePairTransitions.isValid(current, next)) {
            return "the IB spec allows no transition from " + current + " to " + next
                    + " (from any state a QP may only go to RESET or ERR, else RESET->INIT->RTR->RTS)";
        }
        StringBuilder sb = new StringBuilder("invalid attributes for a ").append(type).append(" QP");
        if (!missing.isEmpty()) {
            sb.append("; missing ").append(describe(missing));
        }
        if (!extra.isEmpty()) {
            sb.append("; not accepted by this transition ").append(describe(extra));
        }
        return sb.toString();
    }

    private static String describe(Set<QueuePairAttribute> attrs) {
        return attrs.stream().map(a -> a + " (" + a.setter() + ")").collect(Collectors.joining(", ", "[", "]"));
    }

    /** The QP's transport type. */
    public QueuePairType type() { return type; }

    /** The state the QP was in. */
    public QueuePairState current() { return current; }

    /** The requested state. */
    public QueuePairState next() { return next; }

    /** Attributes the transition requires that were not set. */
    public Set<QueuePairAttribute> missing() { return missing; }

    /** Attributes that were set but the transition does not accept for this QP type. */
    public Set<QueuePairAttribute> extra() { return extra; }
}
