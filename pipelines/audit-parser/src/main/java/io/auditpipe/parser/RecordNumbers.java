package io.auditpipe.parser;

/**
 * Percona's numbered record ids: audit_log writes {@code <n>_<startup time>}, n counting up by one
 * from the plugin's start through rotations (the JSON, XML and CSV formats; the other formats carry
 * no such sequence, nor does the syslog handler's {@code <n>_1970-01-01T00:00:00}). The record-gap rule follows each sequence, and the chain remembers the numbers
 * it passed as runs of a sequence instead of one id each.
 */
public final class RecordNumbers {
    /** What {@link #number} answers for a record outside any sequence. */
    public static final long NONE = -1;

    private static final String PERCONA = "percona-";
    private static final int MAX_DIGITS = 18; // below Long.MAX_VALUE
    /** The longest startup time taken (Percona writes 19 characters): state keeps it per sequence. */
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

    /** The sequence's startup time as the record id writes it, or null for a record outside any sequence. */
    public static String startup(AuditEvent e) {
        int sep = separator(e);
        return sep < 0 ? null : e.recordId.substring(sep + 1);
    }

    /** Where the '_' after the number is, or -1 unless the record is Percona's and its id is {@code <digits>_<text>} (text of at most 64 characters). */
    private static int separator(AuditEvent e) {
        String id = e.recordId;
        if (id == null || e.format == null || !e.format.startsWith(PERCONA)) return -1;
        int i = 0;
        while (i < id.length() && i <= MAX_DIGITS && id.charAt(i) >= '0' && id.charAt(i) <= '9') i++;
        if (i == 0 || i > MAX_DIGITS || i >= id.length() - 1 || id.charAt(i) != '_') return -1;
        if (id.length() - i - 1 > MAX_STARTUP) return -1;
        if (restartsWithServer(id, i)) return -1;
        return i;
    }

    /**
     * Whether a Percona record id is {@code <n>_1970-01-01T00:00:00}, numbered by the syslog handler
     * from each server start ({@link #SYSLOG_STARTUP}): the same id again after a restart is another record.
     */
    public static boolean restartsWithServer(String recordId) {
        int sep = recordId == null ? -1 : recordId.indexOf('_');
        return sep > 0 && restartsWithServer(recordId, sep);
    }

    private static boolean restartsWithServer(String id, int sep) {
        return id.length() - sep - 1 == SYSLOG_STARTUP.length() && id.startsWith(SYSLOG_STARTUP, sep + 1);
    }
}
