package io.auditpipe.parser;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * The timestamp shapes the MySQL-family audit plugins write. Percona 5.7 writes {@code
 * 2024-01-15T10:30:00 UTC}, Percona 8.0 {@code 2024-09-03T01:53:33Z}: UTC, said in the text. A bare
 * {@code 2024-01-15T10:30:00} or {@code 2024-01-15 10:30:00} (MySQL Enterprise Audit writes UTC
 * this way, Percona's audit_log_filter the server's local time) is read in the source's time zone
 * (config {@code sources[].timezone}, default UTC).
 *
 * <p>Every record has one, so the common shapes (whole seconds, {@code T} or a space, then {@code
 * Z}, {@code UTC} or nothing) are read digit by digit; java.time's parsers (a formatter and a
 * regular expression per call) took a quarter of parsing and enrichment's time (profiled
 * 2026-11-24). Any other shape, and any value out of range, goes to java.time, whose answer is the
 * reference (AuditTimestampsTest compares the two on generated timestamps).
 */
public final class AuditTimestamps {
    private AuditTimestamps() {}

    private static final Pattern ENDS_WITH_OFFSET = Pattern.compile(".*[+-]\\d\\d:\\d\\d$");

    /** Epoch milliseconds, or throws {@link IllegalArgumentException} naming the bad value. */
    public static long parseEpochMillis(String text) {
        return parseEpochMillis(text, ZoneOffset.UTC);
    }

    /**
     * Epoch milliseconds; a time without a zone is in {@code zone}. Throws {@link
     * IllegalArgumentException}.
     */
    public static long parseEpochMillis(String text, ZoneId zone) {
        long fast = text == null ? NOT_READ : readCommonShape(text, zone);
        return fast != NOT_READ ? fast : parseWithJavaTime(text, zone);
    }

    static final long NOT_READ = Long.MIN_VALUE;

    /**
     * {@code yyyy-MM-ddTHH:mm:ss} (or a space for the T) followed by nothing, {@code Z} or {@code "
     * UTC"}; {@link #NOT_READ} for any other text or a field out of range.
     */
    static long readCommonShape(String t, ZoneId zone) {
        int n = t.length();
        boolean utc;
        if (n == 19) {
            utc = false;
        } else if (n == 20 && t.charAt(19) == 'Z') {
            utc = true;
        } else if (n == 23 && t.startsWith(" UTC", 19)) {
            utc = true;
        } else {
            return NOT_READ;
        }
        char sep = t.charAt(10);
        if (t.charAt(4) != '-'
                || t.charAt(7) != '-'
                || (sep != 'T' && sep != ' ')
                || t.charAt(13) != ':'
                || t.charAt(16) != ':') {
            return NOT_READ;
        }
        int year = digits(t, 0, 4), month = digits(t, 5, 2), day = digits(t, 8, 2);
        int hour = digits(t, 11, 2), minute = digits(t, 14, 2), second = digits(t, 17, 2);
        if ((year | month | day | hour | minute | second) < 0
                || hour > 23
                || minute > 59
                || second > 59) {
            return NOT_READ;
        }
        LocalDate date;
        try {
            date = LocalDate.of(year, month, day);
        } catch (DateTimeException outOfRange) {
            return NOT_READ;
        }
        int secondOfDay = hour * 3600 + minute * 60 + second;
        if (utc || zone == ZoneOffset.UTC) {
            return (date.toEpochDay() * 86_400L + secondOfDay) * 1000L;
        }
        return date.atTime(hour, minute, second).atZone(zone).toInstant().toEpochMilli();
    }

    /** The number written by {@code len} ASCII digits at {@code from}; -1 if any is not a digit. */
    private static int digits(String t, int from, int len) {
        int v = 0;
        for (int i = from; i < from + len; i++) {
            char c = t.charAt(i);
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** Every shape java.time's ISO parsers take: the reference the fast path is tested against. */
    static long parseWithJavaTime(String text, ZoneId zone) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("timestamp is empty");
        }
        String t = text.trim();
        if (t.endsWith(" UTC")) {
            t = t.substring(0, t.length() - 4);
            zone = ZoneOffset.UTC; // said in the text: the source's zone does not apply
        }
        if (t.length() > 10 && t.charAt(10) == ' ') {
            t = t.substring(0, 10) + 'T' + t.substring(11);
        }
        try {
            if (t.endsWith("Z") || ENDS_WITH_OFFSET.matcher(t).matches()) {
                return Instant.parse(t).toEpochMilli();
            }
            return LocalDateTime.parse(t).atZone(zone).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "timestamp '" + text + "' is not an ISO-8601 date-time");
        }
    }
}
