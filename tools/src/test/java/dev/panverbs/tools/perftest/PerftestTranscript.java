package dev.panverbs.tools.perftest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Parses what a perftest program printed (the C tool or the panverbs clone, with the same code): the header
 * fields in order, the address lines, the column header and the result rows, checking each line against the
 * exact printf shape perftest 6.06 uses.
 */
record PerftestTranscript(List<String> headerKeys, Map<String, String> header, List<String> addressLines,
                          String columns, List<String> rows, List<String> unparsed) {

    /** {@code REPORT_FMT} and its --report_gbits accuracy variant, and the -D --cpu_util extension. */
    static final Pattern BW_ROW = Pattern.compile(
            " \\d+ +\\d+ +\\d+\\.\\d{2} +\\d+\\.\\d{2} *\\t\\t   \\d+\\.\\d{6}( *)?(\\t    \\d+\\.\\d{2} *)?");
    static final Pattern BW_ROW_ACCURATE = Pattern.compile(" \\d+ +\\d+ +\\d+\\.\\d{6} +\\d+\\.\\d{6} +\\d+\\.\\d{6}");
    /**
     * A latency figure as C's printf writes it: the C tools under TCG sometimes divide by a zero cycle count and
     * print inf or -nan in any column (their clock, not ours); the layout is still checked.
     */
    private static final String LAT = "(?:\\d+\\.\\d{2}|-?inf|-?nan)";
    /** {@code REPORT_FMT_LAT}. */
    static final Pattern LAT_ROW = Pattern.compile(" \\d+ +\\d+ {10}" + LAT + " +" + LAT + " +" + LAT + " +\\t"
            + " {7}" + LAT + " +\\t" + LAT + " *\\t\\t" + LAT + " +\\t\\t" + LAT + " *");
    /** {@code REPORT_FMT_LAT_DUR}. */
    static final Pattern LAT_DUR_ROW = Pattern.compile(" \\d+ +\\d+ +(\\d+\\.\\d{2}|-?inf|-?nan) +\\d+\\.\\d{2} *");
    static final Pattern ADDRESS = Pattern.compile(" (local|remote) address: LID (0000|0x[0-9a-f]{2,}) QPN "
            + "0x[0-9a-f]{4,} PSN (0x[0-9a-f]{4,}|000000)( OUT 0x[0-9a-f]{2,})?( RKey (0x[0-9a-f]{6,}|00000000) VAddr "
            + "0x[0-9a-f]{14,})?");
    static final Pattern GID = Pattern.compile(" GID: (\\d{2,3}:){15}\\d{2,3}");

    static PerftestTranscript parse(String out) {
        List<String> keys = new ArrayList<>();
        Map<String, String> header = new LinkedHashMap<>();
        List<String> addresses = new ArrayList<>();
        List<String> rows = new ArrayList<>();
        List<String> unparsed = new ArrayList<>();
        String columns = null;
        for (String line : out.split("\n")) {
            if (line.isEmpty() || line.equals(PerftestOutput.RESULT_LINE.trim()) || line.startsWith("*")
                    || line.startsWith("                    ")) {
                continue;
            }
            if (ADDRESS.matcher(line).matches() || GID.matcher(line).matches()) {
                addresses.add(line);
            } else if (line.startsWith(" #bytes")) {
                columns = line;
            } else if (BW_ROW.matcher(line).matches() || BW_ROW_ACCURATE.matcher(line).matches()
                    || LAT_ROW.matcher(line).matches() || LAT_DUR_ROW.matcher(line).matches()) {
                rows.add(line);
            } else if (line.startsWith(" ") && line.contains(":")) {
                for (String part : line.split("\t\t")) {
                    int c = part.indexOf(':');
                    String key = part.substring(0, c).trim();
                    keys.add(key);
                    header.put(key, part.substring(c + 1).trim());
                }
            } else {
                unparsed.add(line);
            }
        }
        return new PerftestTranscript(keys, header, addresses, columns, rows, unparsed);
    }
}
