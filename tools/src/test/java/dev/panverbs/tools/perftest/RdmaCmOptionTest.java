package dev.panverbs.tools.perftest;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static dev.panverbs.tools.perftest.PerftestOutputTest.RL;
import static dev.panverbs.tools.perftest.PerftestOutputTest.rxeClient;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * -R/--rdma_cm and -z/--comm_rdma_cm on the host: what the options set and how they combine (perftest's own
 * refusals are replayed from the C tool by {@link PerftestParserGoldenTest}), the header and JSON lines perftest
 * 6.06 prints for them ({@code ctx_print_test_info}), and the binary key message of its rdma_cm channel
 * ({@code rdma_write_keys}/{@code rdma_read_keys}).
 */
class RdmaCmOptionTest {

    record Parsed(PerftestParser.Outcome outcome, String out, String err) { }

    static Parsed parse(PerftestTest test, String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        PerftestParser.Outcome outcome;
        try (PrintStream out = new PrintStream(o, true, StandardCharsets.UTF_8);
             PrintStream err = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            outcome = PerftestParser.parse(test, test.programName(), List.of(args), out, err);
        }
        return new Parsed(outcome, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void rdmaCmImpliesTheRdmaCmExchange() {
        for (PerftestTest t : PerftestTest.values()) {
            PerftestParameters p = parse(t, "-R", "h").outcome().params();
            assertThat(p.rdmaCm).as(t.programName()).isTrue();
            assertThat(p.commRdmaCm).as(t.programName()).isTrue();
            assertThat(p.retryCount).isEqualTo(7);
        }
        PerftestParameters z = parse(PerftestTest.SEND_LAT, "--comm_rdma_cm").outcome().params();
        assertThat(z.commRdmaCm).isTrue();
        assertThat(z.rdmaCm).isFalse();
        PerftestParameters r = parse(PerftestTest.READ_BW, "--rdma_cm", "--retry_count=3", "-q", "2", "h")
                .outcome().params();
        assertThat(r.retryCount).isEqualTo(3);
        assertThat(r.numQps).isEqualTo(2);
    }

    @Test
    void perftestRefusalsWithRdmaCm() {
        Parsed uc = parse(PerftestTest.WRITE_BW, "-R", "-c", "UC");
        assertThat(uc.outcome().proceed()).isFalse();
        assertThat(uc.out()).isEqualTo(RL + " UC is not supported in librdmacm\n");
        Parsed tos = parse(PerftestTest.WRITE_BW, "-T", "5");
        assertThat(tos.outcome().proceed()).isFalse();
        assertThat(tos.out()).isEqualTo(" TOS only valid for rdma_cm based QP and RawEth QP \n");
        Parsed lat = parse(PerftestTest.WRITE_LAT, "-R", "-q", "2");
        assertThat(lat.outcome().proceed()).isFalse();
        assertThat(lat.err()).contains("Multiple QPs only available on bw tests");
    }

    @Test
    void whatPanverbsDoesNotDoWithRdmaCmIsRefusedByName() {
        String[][] cases = {{"--direct_wqe"}};
        for (String[] extra : cases) {
            String[] args = new String[extra.length + 1];
            args[0] = "-R";
            System.arraycopy(extra, 0, args, 1, extra.length);
            Parsed r = parse(PerftestTest.SEND_BW, args);
            assertThat(r.outcome().proceed()).as(Arrays.toString(args)).isFalse();
            assertThat(r.err()).as(Arrays.toString(args)).contains("-R").contains(extra[0])
                    .contains("not supported").endsWith(" Parser function exited with Error\n");
        }
        // without -R they are fine (-T aside, which perftest refuses)
        assertThat(parse(PerftestTest.SEND_BW, "-c", "UD").outcome().proceed()).isTrue();
        assertThat(parse(PerftestTest.SEND_BW, "-z", "-c", "UD").outcome().proceed()).isTrue();
        // UD QPs over rdma_cm (RDMA_PS_UDP), as perftest: PerftestRdmaCmInteropIT runs them against C both ways
        assertThat(parse(PerftestTest.SEND_BW, "-R", "-c", "UD").outcome().proceed()).isTrue();
        assertThat(parse(PerftestTest.SEND_LAT, "-R", "-c", "UD").outcome().proceed()).isTrue();
        // rdma_create_qp with ibv_qp_init_attr.srq, as perftest's ctx_qp_create (PerftestRdmaCmInteropIT)
        assertThat(parse(PerftestTest.SEND_BW, "-R", "--use-srq").outcome().proceed()).isTrue();
    }

    @Test
    void headerOfAnRdmaCmClientAndServer() {
        PerftestParameters c = rxeClient(PerftestTest.WRITE_BW, "-R", "-n", "200", "10.77.0.1");
        assertThat(PerftestOutput.header(c, true)).endsWith(" Max inline data : 0[B]\n"
                + " rdma_cm QPs\t : ON\n"
                + " Data ex. method : rdma_cm\n"
                + RL);
        PerftestParameters s = rxeClient(PerftestTest.WRITE_BW, "-R");
        assertThat(PerftestOutput.header(s, true)).endsWith(" rdma_cm QPs\t : ON\n"
                + " Data ex. method : rdma_cm\n"
                + RL
                + " Waiting for client rdma_cm QP to connect\n"
                + " Please run the same command with the IB/RoCE interface IP\n"
                + RL);
        PerftestParameters z = rxeClient(PerftestTest.WRITE_BW, "-z");
        assertThat(PerftestOutput.header(z, true)).endsWith(" rdma_cm QPs\t : OFF\n"
                + " Data ex. method : rdma_cm\n"
                + RL);
        PerftestParameters t = rxeClient(PerftestTest.WRITE_BW, "-R", "-T", "32");
        assertThat(PerftestOutput.header(t, true)).contains(" Data ex. method : rdma_cm \tTOS    : 32\n" + RL
                + " Waiting for client rdma_cm QP to connect\n");
        PerftestParameters jt = rxeClient(PerftestTest.WRITE_BW, "-R", "-T", "32", "--out_json", "h");
        assertThat(JsonReport.bw(jt, true, new BwReport(65536, 200, 90.57, 83.37, 0.001334), 0))
                .contains("Data_ex_method: rdma_cm,\nTOS: 32,\n},\n");
        PerftestParameters j = rxeClient(PerftestTest.WRITE_BW, "-R", "--out_json", "h");
        assertThat(JsonReport.bw(j, true, new BwReport(65536, 200, 90.57, 83.37, 0.001334), 0))
                .contains("Max_inline_data: 0,\nrdma_cm_QPs: ON,\nData_ex_method: rdma_cm,\n},\n");
    }

    @Test
    void addressLinesAreThoseOfTheExchangeWhoseVerbIsSend() {
        KeyMessage k = new KeyMessage(0, 0x80, 0x12, 0xabcdef, 0x254, 0x55e79d788000L, null, 0);
        for (String opt : new String[] {"-R", "-z"}) {
            PerftestParameters r = rxeClient(PerftestTest.READ_BW, opt, "h");
            r.gidIndex = -1;
            assertThat(PerftestOutput.address(r, k, true, 0)).as(opt)
                    .isEqualTo(" local address: LID 0000 QPN 0x0012 PSN 0xabcdef\n");
        }
        PerftestParameters tcp = rxeClient(PerftestTest.READ_BW, "h");
        tcp.gidIndex = -1;
        assertThat(PerftestOutput.address(tcp, k, true, 0)).isEqualTo(" local address: LID 0000 QPN 0x0012 PSN "
                + "0xabcdef OUT 0x80 RKey 0x000254 VAddr 0x0055e79d788000\n");
    }

    @Test
    void keyMessageIsTheBigEndianStruct() {
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        gid[12] = 10;
        gid[15] = 1;
        KeyMessage k = new KeyMessage(0, 0x80, 0x12, 0xabcdef, 0x254, 0x55e79d788000L, gid, 0);
        byte[] m = CmKeyMessage.encode(k);
        assertThat(m).hasSize(56);
        ByteBuffer b = ByteBuffer.wrap(m); // big endian
        assertThat(b.getInt(0)).isZero();
        assertThat(b.getInt(4)).isEqualTo(0x80);
        assertThat(b.getInt(8)).isEqualTo(0x12);
        assertThat(b.getInt(12)).isEqualTo(0xabcdef);
        assertThat(b.getInt(16)).isEqualTo(0x254);
        assertThat(b.getLong(24)).isEqualTo(0x55e79d788000L);
        assertThat(Arrays.copyOfRange(m, 32, 48)).isEqualTo(gid);
        assertThat(b.getInt(48)).isZero();
        // the C sender leaves the padding (bytes 20..23) uninitialised: the reader ignores it
        m[20] = 0x5a;
        m[23] = (byte) 0xa5;
        KeyMessage back = CmKeyMessage.decode(m, true, "QP 0 address");
        assertThat(back.qpn()).isEqualTo(0x12);
        assertThat(back.psn()).isEqualTo(0xabcdef);
        assertThat(back.rkey()).isEqualTo(0x254);
        assertThat(back.vaddr()).isEqualTo(0x55e79d788000L);
        assertThat(back.outReads()).isEqualTo(0x80);
        assertThat(back.gid()).isEqualTo(gid);
        // this side's GID choice decides whether the GID is shown
        assertThat(CmKeyMessage.decode(m, false, "QP 0 address").hasGid()).isFalse();
    }

    @Test
    void aKeyMessageNoPerftestSendsIsReported() {
        assertThatThrownBy(() -> CmKeyMessage.decode(new byte[16], true, "QP 0 address"))
                .isInstanceOf(ExchangeException.class).hasMessageContaining("16 bytes").hasMessageContaining("56");
        byte[] m = new byte[56];
        ByteBuffer.wrap(m).putInt(8, 0x7f000000); // a QPN wider than 24 bits
        assertThatThrownBy(() -> CmKeyMessage.decode(m, true, "QP 1 address"))
                .isInstanceOf(ExchangeException.class).hasMessageContaining("QP 1 address")
                .hasMessageContaining("perftest");
    }

    /** Whatever 0..80 bytes a peer sends: a KeyMessage or an ExchangeException naming the step, nothing else. */
    @Test
    void randomBytesGiveAKeyOrAnExchangeException() {
        java.util.Random r = new java.util.Random(56);
        int refused = 0;
        for (int i = 0; i < 2000; i++) {
            byte[] m = new byte[i % 10 == 0 ? r.nextInt(81) : 56];
            r.nextBytes(m);
            try {
                assertThat(CmKeyMessage.decode(m, r.nextBoolean(), "QP 2 address")).isNotNull();
            } catch (ExchangeException e) {
                assertThat(e).hasMessageContaining("QP 2 address");
                refused++;
            }
        }
        assertThat(refused).isPositive();
    }
}
