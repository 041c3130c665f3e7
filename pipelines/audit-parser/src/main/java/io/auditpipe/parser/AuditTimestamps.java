package io.auditpipe.parser;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * The timestamp shapes the MySQL-family audit plugins write.
 * Percona 5.7 writes {@code 2024-01-15T10:30:00 UTC}, Percona 8.0 {@code 2024-09-03T01:53:33Z}: UTC,
 * said in the text. A bare {@code 2024-01-15T10:30:00} or {@code 2024-01-15 10:30:00} (MySQL
 * Enterprise Audit writes UTC this way, Percona's audit_log_filter the server's local time) is
 * read in the source's time zone (config {@code sources[].timezone}, default UTC).
 */
public final class AuditTimestamps {
    private AuditTimestamps() {}

    /** Epoch milliseconds, or throws {@link IllegalArgumentException} naming the bad value. */
    public static long parseEpochMillis(String text) {
        return parseEpochMillis(text, ZoneOffset.UTC);
    }

    /** Epoch milliseconds; a time without a zone is in {@code zone}. Throws {@link IllegalArgumentException}. */
    public static long parseEpochMillis(String text, java.time.ZoneId zone) {
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
            if (t.endsWith("Z") || t.matches(".*[+-]\\d\\d:\\d\\d$")) {
                return Instant.parse(t).toEpochMilli();
            }
            return LocalDateTime.parse(t).atZone(zone).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("timestamp '" + text + "' is not an ISO-8601 date-time");
        }
    }
}
