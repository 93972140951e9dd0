package dev.panverbs.tools.perftest;

/**
 * The device families perftest 6.06 tells apart by PCI vendor part id ({@code ib_dev_name}); they decide the
 * default inline size of the latency tests and whether an explicit -I is honoured at all. Devices perftest does
 * not know (rxe, siw, ...) get inline 0, and "-I" prints "Device not recognized to implement inline feature".
 */
enum DeviceFamily {
    CONNECTX, CONNECTX2, CONNECTX3, CONNECTX3_PRO, CONNECTIB, CONNECTX4, CONNECTX4LX, CONNECTX5, CONNECTX5EX,
    CONNECTX6, CONNECTX6DX, CONNECTX6LX, CONNECTX7, MLX5GENVF, BLUEFIELD, BLUEFIELD2, BLUEFIELD3, CHELSIO,
    INTEL, SKYHAWK, QLOGIC_E4, QLOGIC_AH, NETXTREME, EFA, UNKNOWN;

    static DeviceFamily of(int vendorId, int partId) {
        if (vendorId == 5157) {
            int gen = partId >> 12;
            return gen == 4 || gen == 5 || gen == 6 || gen == 10 || gen == 11 ? CHELSIO : UNKNOWN;
        }
        if (vendorId == 0x8086) {
            return INTEL;
        }
        return switch (partId) {
            case 4099, 4100 -> CONNECTX3;
            case 4103, 4104 -> CONNECTX3_PRO;
            case 4113 -> CONNECTIB;
            case 4115, 4116 -> CONNECTX4;
            case 4117, 4118 -> CONNECTX4LX;
            case 4119, 4120 -> CONNECTX5;
            case 4121, 4122 -> CONNECTX5EX;
            case 4123, 4124 -> CONNECTX6;
            case 4125 -> CONNECTX6DX;
            case 4126 -> MLX5GENVF;
            case 4127 -> CONNECTX6LX;
            case 4129 -> CONNECTX7;
            case 41682, 41683 -> BLUEFIELD;
            case 41686 -> BLUEFIELD2;
            case 41692 -> BLUEFIELD3;
            case 26418, 26428, 26438, 26448, 26458, 26468, 26478 -> CONNECTX2;
            case 25408, 25418, 25428, 25448 -> CONNECTX;
            case 1824 -> SKYHAWK;
            case 5684, 5700, 5716, 5718, 5734 -> QLOGIC_E4;
            case 32880, 32881, 32882, 32883, 32912, 33136, 33168 -> QLOGIC_AH;
            case 5638, 5652, 5824, 5825, 5827, 5839, 5846, 5847, 5848, 5849, 5855, 5858, 5859, 5861, 5867, 5869,
                 5871, 5872, 5873, 5968, 55296, 55298, 55300 -> NETXTREME;
            case 61344, 61345 -> EFA;
            default -> UNKNOWN;
        };
    }

    /** The default inline size perftest picks ({@code ctx_set_max_inline}) for a latency test; 0 for BW. */
    int defaultInline(PerftestTest test, PerftestParameters.Connection conn) {
        if (test.isBw()) {
            return 0;
        }
        int v = switch (test.verb()) {
            case WRITE -> 220;
            case SEND -> conn == PerftestParameters.Connection.UD ? 188 : 236;
            default -> 0;
        };
        if (this == NETXTREME) {
            v = 96;
        } else if (this == EFA) {
            v = 32;
        } else if (this == QLOGIC_E4) {
            v = 128;
        }
        return v;
    }
}
