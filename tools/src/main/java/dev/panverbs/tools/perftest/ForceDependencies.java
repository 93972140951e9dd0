package dev.panverbs.tools.perftest;

import dev.panverbs.tools.perftest.PerftestParameters.Connection;
import dev.panverbs.tools.perftest.PerftestParameters.Output;
import dev.panverbs.tools.perftest.PerftestParameters.TestMethod;
import dev.panverbs.tools.perftest.PerftestParameters.TestType;
import dev.panverbs.tools.perftest.PerftestTest.Verb;

import java.io.PrintStream;

import static dev.panverbs.tools.perftest.PerftestParser.RESULT_LINE;
import static dev.panverbs.tools.perftest.PerftestParser.exit;

/**
 * perftest's {@code force_dependecies()}: the defaults that depend on other options and the cross-option checks,
 * in perftest's order, with its messages on its streams (a RESULT_LINE on stdout, then the error on stderr, then
 * {@code exit(1)} without the parser line). Branches for features panverbs rejects earlier are left out.
 */
final class ForceDependencies {
    private ForceDependencies() { }

    static void apply(PerftestParameters p, PrintStream out, PrintStream err) {
        boolean bw = p.isBw();
        if (p.testType == TestType.ITERATIONS) {
            p.txDepth = Math.min(p.txDepth, p.iters);
            if (p.verb() == Verb.SEND && p.rxDepth > p.iters) {
                p.rxDepth = p.iters;
            }
            if ((p.connection == Connection.UD || p.connection == Connection.UC)
                    && p.rxDepth == PerftestParameters.DEF_RX_SEND) {
                p.rxDepth = Math.min(p.iters, 16000);
            }
        }

        // CQ moderation is pointless for large messages and would distort the result: it is turned off unless
        // the user asked for it (then only warned), except for UD, -a and events.
        if (p.size > PerftestParameters.MSG_SIZE_CQ_MOD_LIMIT && p.connection != Connection.UD
                && p.testMethod != TestMethod.ALL && !p.useEvent) {
            if (!p.reqCqMod) {
                p.cqMod = 1;
            } else if (p.cqMod > 1) {
                out.print(RESULT_LINE);
                out.print("Warning: Large message requested and CQ moderation enabled\n");
                out.print("Warning: It can lead to inaccurate results\n");
            }
        }

        if (p.cqMod > p.txDepth) {
            p.cqMod = p.txDepth;
        }
        if (p.verb() == Verb.READ) {
            p.inlineSize = 0;
        }
        if (p.testMethod == TestMethod.ALL) {
            p.size = PerftestParameters.MAX_SIZE;
        }
        if (p.useSrq && p.verb() != Verb.SEND) {
            out.print(RESULT_LINE);
            exit(out, " Using SRQ only avavilible in SEND tests.");
        }
        if (p.useSrq && p.numQps > p.rxDepth) {
            out.print(RESULT_LINE);
            exit(out, " Using SRQ depth should be greater than number of QPs.");
        }

        if (p.postList < 1) {
            // perftest takes any int here and then spins forever with 0; refuse it instead
            out.print(RESULT_LINE);
            exit(err, " Send Post List size must be positive");
        }
        if (p.postList > 1) {
            if (bw) {
                if (p.testType == TestType.ITERATIONS && p.iters % p.postList != 0) {
                    out.print(RESULT_LINE);
                    exit(err, "Number of iterations must be a multiple of post list size");
                }
                if (!p.reqCqMod) {
                    p.cqMod = p.postList;
                    out.print(RESULT_LINE);
                    out.print("Post List requested - CQ moderation will be the size of the post list\n");
                } else if (p.postList % p.cqMod != 0) {
                    out.print(RESULT_LINE);
                    exit(err, "Post list size must be a multiple of CQ moderation");
                }
                if (p.postList > p.txDepth) {
                    // perftest would never post: scnt - ccnt + post_list <= tx_depth stays false
                    out.print(RESULT_LINE);
                    exit(err, " Post list size (" + p.postList + ") must not exceed TX depth (" + p.txDepth + ")");
                }
            } else {
                out.print(RESULT_LINE);
                exit(err, "Post list is supported in BW tests only");
            }
        }

        if (p.testType == TestType.DURATION) {
            p.iters = 0;
            p.noPeak = true;
            if (p.useEvent) {
                out.print(RESULT_LINE);
                exit(err, "Duration mode doesn't work with events.");
            }
            if (p.testMethod == TestMethod.ALL) {
                out.print(RESULT_LINE);
                exit(err, "Duration mode currently doesn't support running on all sizes.");
            }
            if (p.cpuUtil) {
                p.cpuUtilEnabled = true;
            }
        }
        if (p.testType != TestType.DURATION && p.cpuUtil) {
            out.print(RESULT_LINE);
            err.print(" CPU Utilization works only with Duration mode.\n");
        }

        if (p.rdmaCm) {
            if (p.connection == Connection.UC) {
                out.print(RESULT_LINE);
                exit(out, " UC is not supported in librdmacm");
            }
            p.commRdmaCm = true; // -R exchanges over rdma_cm too
        } else if (p.tos != PerftestParameters.DEF_TOS) {
            exit(out, " TOS only valid for rdma_cm based QP and RawEth QP ");
        }
        if (p.hopLimit != PerftestParameters.DEF_HOP_LIMIT) {
            exit(out, " Hop limit only valid for RawEth QP ");
        }

        if (p.verb() == Verb.SEND && bw && p.isServer() && !p.duplex) {
            p.noPeak = true; // the receiver has no per-message post times
        }

        if (p.output != Output.FULL) {
            if (bw && !(p.output == Output.BANDWIDTH || p.output == Output.MESSAGE_RATE)) {
                out.print(RESULT_LINE);
                exit(err, " Output verbosity level for BW can be: bandwidth, message_rate");
            }
            if (!bw && p.output != Output.LATENCY) {
                out.print(RESULT_LINE);
                exit(err, " Output verbosity level for LAT can be: latency");
            }
        }

        if (p.latencyGap > 0 && bw) {
            out.print(RESULT_LINE);
            exit(err, " Latency gap feature is only for latency tests");
        }

        if (p.testType == TestType.DURATION && p.margin == PerftestParameters.DEF_INIT_MARGIN) {
            p.margin = p.duration / 4;
        }

        if (p.connection == Connection.UD && p.inlineSize > PerftestParameters.MAX_INLINE_UD) {
            out.print(RESULT_LINE);
            err.printf("Setting inline size to %d (Max inline size in UD)%n", PerftestParameters.MAX_INLINE_UD);
            p.inlineSize = PerftestParameters.MAX_INLINE_UD;
        }

        // perftest's workaround for odd receive depths in SEND
        if (p.verb() == Verb.SEND && p.rxDepth % 2 == 1 && p.testMethod == TestMethod.REGULAR) {
            p.rxDepth += 1;
        }

        if (p.testType == TestType.ITERATIONS && p.iters > 20000 && !p.noPeak && bw) {
            p.noPeak = true; // the peak search is quadratic in iterations
        }

        if (!(p.duration > 2 * p.margin)) {
            out.print(RESULT_LINE);
            exit(err, "please check that DURATION > 2*MARGIN");
        }

        if (!p.useEvent && p.useEqNum) {
            exit(err, " Events must be enabled to select a completion vector");
        }
    }
}
