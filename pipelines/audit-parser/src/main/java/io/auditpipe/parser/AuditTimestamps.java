package io.auditpipe.parser;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * The timestamp shapes the MySQL-family audit plugins write, all read as UTC.
 * Percona 5.7 writes {@code 2024-01-15T10:30:00 UTC}, Percona 8.0 {@code 2024-09-03T01:53:33Z};
 * a bare {@code 2024-01-15T10:30:00} or {@code 2024-01-15 10:30:00} is taken as UTC too.
 */
public final class AuditTimestamps {
    private AuditTimestamps() {}

    /** Epoch milliseconds, or throws {@link IllegalArgumentException} naming the bad value. */
    public static long parseEpochMillis(String text) {
        if (text == null || text.isEmpty()) {
            throw new IllegalArgumentException("timestamp is empty");
        }
        String t = text.trim();
        if (t.endsWith(" UTC")) {
            t = t.substring(0, t.length() - 4);
        }
        if (t.length() > 10 && t.charAt(10) == ' ') {
            t = t.substring(0, 10) + 'T' + t.substring(11);
        }
        try {
            if (t.endsWith("Z") || t.matches(".*[+-]\\d\\d:\\d\\d$")) {
                return Instant.parse(t).toEpochMilli();
            }
            return LocalDateTime.parse(t).toInstant(ZoneOffset.UTC).toEpochMilli();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("timestamp '" + text + "' is not an ISO-8601 date-time");
        }
    }
}
