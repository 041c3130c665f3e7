package io.auditpipe.parser;

/**
 * Percona's numbered record ids: audit_log writes {@code <n>_<startup time>}, n counting up by one
 * from the plugin's start through rotations (the JSON, XML and CSV formats; the other formats carry
 * no such sequence, nor does the syslog handler's {@code <n>_1970-01-01T00:00:00}). The record-gap
 * rule follows each sequence, and the chain remembers the numbers it passed as runs of a sequence
 * instead of one id each.
 */
public final class RecordNumbers {
    /** What {@link #number} answers for a record outside any sequence. */
    public static final long NONE = -1;

    private static final String PERCONA = "percona-";
    private static final int MAX_DIGITS = 18; // below Long.MAX_VALUE

    /**
     * The longest startup time taken (Percona writes 19 characters): state keeps it per sequence.
     */
    private static final int MAX_STARTUP = 64;

    /**
     * The startup time Percona's syslog handler writes (it has no log of its own to date): its
     * numbers start again at 1 with every server start, so they are no sequence.
     */
    public static final String SYSLOG_STARTUP = "1970-01-01T00:00:00";

    private RecordNumbers() {}

    /** The record's number in its sequence, or {@link #NONE}. */
    public static long number(AuditEvent e) {
        int sep = separator(e);
        if (sep < 0) return NONE;
        long n = 0;
        for (int i = 0; i < sep; i++) n = n * 10 + (e.recordId.charAt(i) - '0');
        return n;
    }

    /**
     * The sequence's startup time as the record id writes it, or null for a record outside any
     * sequence.
     */
    public static String startup(AuditEvent e) {
        int sep = separator(e);
        return sep < 0 ? null : e.recordId.substring(sep + 1);
    }

    /**
     * Where the '_' after the number is, or -1 unless the record is Percona's and its id is {@code
     * <digits>_<text>} (text of at most 64 characters).
     */
    private static int separator(AuditEvent e) {
        String id = e.recordId;
        if (id == null || e.format == null || !e.format.startsWith(PERCONA)) return -1;
        int i = 0;
        while (i < id.length() && i <= MAX_DIGITS && id.charAt(i) >= '0' && id.charAt(i) <= '9')
            i++;
        if (i == 0 || i > MAX_DIGITS || i >= id.length() - 1 || id.charAt(i) != '_') return -1;
        if (id.length() - i - 1 > MAX_STARTUP) return -1;
        if (restartsWithServer(id, i)) return -1;
        return i;
    }

    /** How far into a line {@link #inLine} looks for the record id (Percona writes it second). */
    static final int LINE_HEAD = 512;

    /** What comes right before the record id in Percona's JSON, XML (NEW, OLD) and CSV records. */
    private static final byte[][] ID_BEFORE = {
        "\"record\":\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        "<RECORD_ID>".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        "RECORD=\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        "\",\"".getBytes(java.nio.charset.StandardCharsets.US_ASCII)
    };

    /** A startup time as Percona writes it: {@code 2026-11-23T02:17:01}. */
    private static final String STARTUP_SHAPE = "dddd-dd-ddTdd:dd:dd";

    /**
     * The number and startup time of the Percona record id in a line the job could not parse (a
     * dead letter's bytes), or null: only an id in its place, right after {@code "record":"},
     * {@code <RECORD_ID>}, {@code RECORD="} or the CSV's first {@code ","}, within the line's first
     * {@link #LINE_HEAD} bytes, counts, so that a statement quoting ids further on cannot pass for
     * one.
     */
    public static Numbered inLine(byte[] line) {
        if (line == null) return null;
        int end = Math.min(line.length, LINE_HEAD);
        for (int i = 0; i < end; i++) {
            for (byte[] before : ID_BEFORE) {
                if (!startsAt(line, i, before, end)) continue;
                if (before[0] == '"' && before[1] == ',' && !csvSecondField(line, i)) continue;
                Numbered n = idAt(line, i + before.length, end);
                if (n != null) return n;
            }
        }
        return null;
    }

    /** A record id's number and startup time. */
    public record Numbered(long number, String startup) {}

    private static boolean startsAt(byte[] line, int at, byte[] what, int end) {
        if (at + what.length > end) return false;
        for (int k = 0; k < what.length; k++) {
            if (line[at + k] != what[k]) return false;
        }
        return true;
    }

    /**
     * Whether the {@code ","} at {@code at} ends the CSV record's first field: a quoted name from
     * the line's start.
     */
    private static boolean csvSecondField(byte[] line, int at) {
        if (line.length == 0 || line[0] != '"') return false;
        for (int k = 1; k < at; k++) {
            if (line[k] == '"' || line[k] == ',') return false;
        }
        return true;
    }

    private static Numbered idAt(byte[] line, int at, int end) {
        int i = at;
        long n = 0;
        while (i < end && i - at <= MAX_DIGITS && line[i] >= '0' && line[i] <= '9')
            n = n * 10 + (line[i++] - '0');
        if (i == at || i - at > MAX_DIGITS || i >= end || line[i] != '_') return null;
        int s = i + 1;
        if (s + STARTUP_SHAPE.length() > line.length) return null;
        for (int k = 0; k < STARTUP_SHAPE.length(); k++) {
            char want = STARTUP_SHAPE.charAt(k);
            byte b = line[s + k];
            if (want == 'd' ? b < '0' || b > '9' : b != want) return null;
        }
        String startup =
                new String(
                        line,
                        s,
                        STARTUP_SHAPE.length(),
                        java.nio.charset.StandardCharsets.US_ASCII);
        return SYSLOG_STARTUP.equals(startup) ? null : new Numbered(n, startup);
    }

    /**
     * Whether a Percona record id is {@code <n>_1970-01-01T00:00:00}, numbered by the syslog
     * handler from each server start ({@link #SYSLOG_STARTUP}): the same id again after a restart
     * is another record.
     */
    public static boolean restartsWithServer(String recordId) {
        int sep = recordId == null ? -1 : recordId.indexOf('_');
        return sep > 0 && restartsWithServer(recordId, sep);
    }

    private static boolean restartsWithServer(String id, int sep) {
        return id.length() - sep - 1 == SYSLOG_STARTUP.length()
                && id.startsWith(SYSLOG_STARTUP, sep + 1);
    }
}
