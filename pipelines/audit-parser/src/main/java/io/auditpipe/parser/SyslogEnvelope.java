package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;

/**
 * The syslog header in front of an audit record that reached us through syslog, and the record
 * (the body) behind it.
 *
 * <p>What is read (docs/formats.md "Records in a syslog envelope"):
 * <ul>
 *   <li>RFC 5424: {@code <PRI>1 TIMESTAMP HOST APP PROCID MSGID SD MSG}, nil values {@code -}, the
 *       structured data skipped, a byte order mark before the message dropped; the tag is APP. Also
 *       without the {@code <PRI>}, as a receiver that took it off hands the message on.</li>
 *   <li>RFC 3164 and what syslog daemons write to files: an optional {@code <PRI>}, then a time
 *       ({@code Mmm dd hh:mm:ss}, with a year after the day or not, with fractions of a second or not;
 *       or RFC 3339, {@code 2026-11-27T12:00:00.123+01:00}), a host (absent in what a program sends
 *       to the local socket), and a tag ({@code name:} or {@code name[pid]:}); or only a tag in front
 *       of the record ({@code mysql_audit_log: {...}}).</li>
 * </ul>
 * A time without a year takes the latest year that puts it at most a day after the time the record
 * was received (the Kafka record's time, or a file's modification time offline): a record of 31
 * December received on 1 January keeps the old year, one of 1 January received a minute before
 * midnight on 31 December (the sender's clock ahead) the new one, and 29 February the leap year
 * before. A time without an offset is the source's
 * time zone (key field {@code timezone}). One space after the tag's colon is the header's; the
 * body is the rest.
 *
 * <p>Multi-line records through syslog: a syslog daemon writes the control characters of a
 * message it receives as {@code #} and three octal digits ({@code #012} a line feed; rsyslog's
 * default). A body that begins like a record of several lines (XML's {@code <}, CSV's {@code "}, a
 * pretty-printed JSON {@code {#012}) has them turned back into the characters; a record of one line
 * is left as it is (its writer escapes its own control characters, so {@code #012} in it is text).
 * The text {@code #0nn} inside such a multi-line record cannot be told from an escaped character.
 *
 * <p>Reading the header looks at its first {@link #MAX_HEADER} characters only, and a line that
 * starts like a record of any format (none starts with a letter, {@code <} and a digit, or a
 * date with dashes) costs a comparison or two.
 *
 * @param timestamp the header's time as written, or null
 * @param timeMillis the header's time in epoch milliseconds, or {@link Long#MIN_VALUE} when the
 *     header has none
 * @param host the sending host as the header names it, or null
 * @param tag the program's tag (RFC 3164) or app name (RFC 5424), without a pid, or null
 * @param body the record, its escaped control characters turned back where the body is a
 *     multi-line record
 */
public record SyslogEnvelope(
        String timestamp, long timeMillis, String host, String tag, byte[] body) {
    /** The header is looked for in this many first characters of the line. */
    public static final int MAX_HEADER = 512;

    private static final int MAX_TAG = 64;
    private static final long DAY_MILLIS = 86_400_000L;
    private static final String[] MONTHS = {
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
    };

    /** Who sent the record, for a reason: "host h, tag t", or "no sender named". */
    public String sender() {
        if (host == null && tag == null) return "no sender named";
        return (host != null ? "host " + host : "")
                + (host != null && tag != null ? ", " : "")
                + (tag != null ? "tag " + tag : "");
    }

    /** A header that is there but cannot be read: thrown by {@link #read} with the reason. */
    public static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;

        Malformed(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * The envelope of {@code line}, or null when the line starts like a record, with no header.
     *
     * @param receivedMillis when the record was received: the year of a time written without one
     * @throws Malformed when the line starts like a syslog header that is not one (a bad date, an
     *     RFC 5424 header cut short)
     */
    public static SyslogEnvelope read(byte[] line, ZoneId zone, long receivedMillis)
            throws Malformed {
        if (line.length == 0 || !mayStart(line)) return null;
        String s =
                new String(line, 0, Math.min(line.length, MAX_HEADER), StandardCharsets.ISO_8859_1);
        int p = 0;
        boolean pri = false;
        if (s.charAt(0) == '<') {
            int end = s.indexOf('>');
            if (end < 2 || end > 4 || !digits(s, 1, end)) return null;
            pri = true;
            p = end + 1;
        }
        if (pri && s.startsWith("1 ", p)) return rfc5424(line, s, p + 2);
        if (!pri && rfc5424WithoutPri(s)) return rfc5424(line, s, 2);
        String timestamp = null;
        long millis = Long.MIN_VALUE;
        int timeEnd = legacyTime(s, p);
        if (timeEnd > p) {
            timestamp = s.substring(p, timeEnd);
            millis = legacyMillis(timestamp, zone, receivedMillis);
            if (timeEnd >= s.length() || s.charAt(timeEnd) != ' ')
                throw new Malformed("nothing follows the syslog time " + timestamp);
            p = timeEnd + 1;
        } else if (timeEnd < 0) {
            throw new Malformed(
                    "the syslog header's time '"
                            + s.substring(p, Math.min(s.length(), p + 32))
                            + "' is no date");
        }
        String host = null;
        int tagEnd = tag(s, p);
        if (tagEnd < 0 && timestamp != null) { // a host, then the tag (or the record)
            int space = s.indexOf(' ', p);
            int comma = s.indexOf(',', p);
            // no host has a comma: a time before a record's own first field (the CloudWatch Logs
            // export's "2026-11-20T11:00:05.100Z 1795172401000123,...") is no syslog header
            if (!pri && comma >= 0 && (space < 0 || comma < space)) return null;
            if (space <= p) throw new Malformed("nothing follows the syslog header's host");
            host = s.substring(p, space);
            p = space + 1;
            tagEnd = tag(s, p);
        }
        String tag = null;
        if (tagEnd > 0) {
            tag = s.substring(p, tagEnd);
            int bracket = tag.indexOf('[');
            if (bracket > 0) tag = tag.substring(0, bracket);
            p = tagEnd + 1; // the colon
            if (p < line.length && line[p] == ' ') p++;
        } else if (!pri && timestamp == null) {
            return null; // no header at all
        }
        return new SyslogEnvelope(timestamp, millis, host, tag, body(line, p));
    }

    /**
     * Whether a line without a priority starts as an RFC 5424 header does after it: the version 1,
     * then an RFC 3339 time or the nil value ({@code 1 2026-11-27T12:00:00Z host ...}, {@code 1 -
     * host ...}), as a receiver that took the priority off hands the message on (Fluentd's
     * in_syslog).
     */
    private static boolean rfc5424WithoutPri(String s) {
        return s.length() > 4
                && s.charAt(0) == '1'
                && s.charAt(1) == ' '
                && ((s.startsWith("- ", 2))
                        || (s.length() > 13
                                && digits(s, 2, 6)
                                && s.charAt(6) == '-'
                                && s.charAt(12) == 'T'));
    }

    /**
     * Whether a line starting with this byte may have a header: '<' and a digit, a letter, a digit
     * (a date).
     */
    private static boolean mayStart(byte[] line) {
        byte c = line[0];
        if (c == '<') return line.length > 1 && line[1] >= '0' && line[1] <= '9';
        if (c == '1' && line.length > 4 && line[1] == ' ')
            return true; // RFC 5424 without its priority
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) return true;
        // RFC 3339 ("2026-11-27T..."); MariaDB's own lines start "20261127 " and are no header
        return c >= '0' && c <= '9' && line.length > 10 && line[4] == '-' && line[10] == 'T';
    }

    private static SyslogEnvelope rfc5424(byte[] line, String s, int p) throws Malformed {
        String[] f = new String[5]; // TIMESTAMP HOSTNAME APP-NAME PROCID MSGID
        for (int i = 0; i < f.length; i++) {
            int space = s.indexOf(' ', p);
            if (space <= p)
                throw new Malformed(
                        "the RFC 5424 header is cut short after " + i + " of its 6 fields");
            f[i] = s.substring(p, space);
            p = space + 1;
        }
        if (p >= s.length()) throw new Malformed("the RFC 5424 header has no structured data");
        if (s.charAt(p) == '-') {
            p++;
        } else {
            while (p < s.length()
                    && s.charAt(p) == '[') { // SD-ELEMENTs: ']' ends one unless escaped
                p++;
                while (p < s.length() && s.charAt(p) != ']') p += s.charAt(p) == '\\' ? 2 : 1;
                if (p >= s.length())
                    throw new Malformed(
                            "the RFC 5424 structured data is not closed within "
                                    + MAX_HEADER
                                    + " characters");
                p++;
            }
        }
        if (p < line.length && line[p] == ' ') p++;
        if (p + 2 < line.length
                && (line[p] & 0xff) == 0xEF
                && (line[p + 1] & 0xff) == 0xBB
                && (line[p + 2] & 0xff) == 0xBF) p += 3;
        long millis = Long.MIN_VALUE;
        String timestamp = nil(f[0]);
        if (timestamp != null) {
            try {
                millis = OffsetDateTime.parse(timestamp).toInstant().toEpochMilli();
            } catch (DateTimeParseException e) {
                throw new Malformed("the RFC 5424 time '" + timestamp + "' is not RFC 3339");
            }
        }
        return new SyslogEnvelope(timestamp, millis, nil(f[1]), nil(f[2]), body(line, p));
    }

    private static String nil(String v) {
        return "-".equals(v) ? null : v;
    }

    /**
     * Where a time at {@code p} ends: {@code Mmm dd [yyyy ]hh:mm:ss[.frac]} or RFC 3339; p when
     * there is none; -1 when a month or a four-digit year starts something that is no time.
     */
    private static int legacyTime(String s, int p) {
        if (p + 15 > s.length()) return p;
        if (month(s, p) >= 0 && s.charAt(p + 3) == ' ') {
            int q = p + 4;
            if (s.charAt(q) == ' ') q++; // "Nov  7"
            int d = q;
            while (q < s.length() && q - d < 2 && isDigit(s.charAt(q))) q++;
            if (q == d || q >= s.length() || s.charAt(q) != ' ') return -1;
            q++;
            if (q + 5 <= s.length() && digits(s, q, q + 4) && s.charAt(q + 4) == ' ')
                q += 5; // a year
            if (q + 8 > s.length() || !clock(s, q)) return -1;
            q += 8;
            return fraction(s, q);
        }
        if (isDigit(s.charAt(p)) && s.charAt(p + 4) == '-' && s.charAt(p + 10) == 'T') {
            int q = p;
            while (q < s.length() && s.charAt(q) != ' ') {
                // a comma: a record's own time (server_audit_timestamp_format=%Y-%m-%dT...), no
                // header
                if (s.charAt(q) == ',') return p;
                q++;
            }
            return q;
        }
        return p;
    }

    private static long legacyMillis(String t, ZoneId zone, long receivedMillis) throws Malformed {
        try {
            if (isDigit(t.charAt(0))) return OffsetDateTime.parse(t).toInstant().toEpochMilli();
            int month = month(t, 0) + 1;
            int q = t.charAt(4) == ' ' ? 5 : 4;
            int day = Integer.parseInt(t.substring(q, t.indexOf(' ', q)));
            q = t.indexOf(' ', q) + 1;
            Integer year = null;
            if (t.charAt(q + 4) == ' ') {
                year = Integer.parseInt(t.substring(q, q + 4));
                q += 5;
            }
            int hour = Integer.parseInt(t.substring(q, q + 2));
            int minute = Integer.parseInt(t.substring(q + 3, q + 5));
            int second = Integer.parseInt(t.substring(q + 6, q + 8));
            int nanos = 0;
            if (t.length() > q + 9) {
                String frac = (t.substring(q + 9) + "000000000").substring(0, 9);
                nanos = Integer.parseInt(frac);
            }
            if (year != null) {
                return LocalDateTime.of(year, month, day, hour, minute, second, nanos)
                        .atZone(zone)
                        .toInstant()
                        .toEpochMilli();
            }
            // the latest of the years around the receipt that puts the time at most a day after it
            int received = Instant.ofEpochMilli(receivedMillis).atZone(zone).getYear();
            for (int y = received + 1; ; y--) {
                ZonedDateTime at;
                try {
                    at = LocalDateTime.of(y, month, day, hour, minute, second, nanos).atZone(zone);
                } catch (DateTimeException e) {
                    if (y > received - 4) continue; // 29 February: the leap year before
                    throw e;
                }
                if (at.toInstant().toEpochMilli() <= receivedMillis + DAY_MILLIS)
                    return at.toInstant().toEpochMilli();
            }
        } catch (DateTimeException | NumberFormatException | StringIndexOutOfBoundsException e) {
            throw new Malformed("the syslog time '" + t + "' is no date: " + e.getMessage());
        }
    }

    private static int month(String s, int p) {
        if (p + 3 > s.length()) return -1;
        for (int m = 0; m < MONTHS.length; m++) {
            if (s.startsWith(MONTHS[m], p)) return m;
        }
        return -1;
    }

    private static boolean clock(String s, int q) {
        return digits(s, q, q + 2)
                && s.charAt(q + 2) == ':'
                && digits(s, q + 3, q + 5)
                && s.charAt(q + 5) == ':'
                && digits(s, q + 6, q + 8);
    }

    private static int fraction(String s, int q) {
        if (q < s.length() && s.charAt(q) == '.') {
            int f = q + 1;
            while (f < s.length() && f - q <= 9 && isDigit(s.charAt(f))) f++;
            if (f > q + 1) return f;
        }
        return q;
    }

    /** Where the tag starting at {@code p} ends (its colon), or -1 when no tag starts there. */
    private static int tag(String s, int p) {
        if (p >= s.length() || !isLetter(s.charAt(p))) return -1;
        int q = p;
        while (q < s.length() && q - p <= MAX_TAG) {
            char c = s.charAt(q);
            if (c == ':') return q;
            if (c == '[') {
                int close = s.indexOf("]:", q);
                return close > q + 1 && digits(s, q + 1, close) ? close + 1 : -1;
            }
            if (!(isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '/'))
                return -1;
            q++;
        }
        return -1;
    }

    /**
     * The body from {@code p}, its escaped control characters turned back when it is a multi-line
     * record.
     */
    static byte[] body(byte[] line, int p) {
        int n = line.length - p;
        if (n <= 0) return new byte[0];
        int first = p;
        while (first < line.length && line[first] == ' ') first++;
        boolean multiLine =
                first < line.length
                        && (line[first] == '<'
                                || line[first] == '"'
                                || ((line[first] == '{' || line[first] == '[')
                                        && first + 1 < line.length
                                        && line[first + 1] == '#'));
        if (!multiLine) return java.util.Arrays.copyOfRange(line, p, line.length);
        byte[] out = new byte[n];
        int o = 0;
        for (int i = p; i < line.length; i++) {
            if (line[i] == '#'
                    && i + 3 < line.length
                    && line[i + 1] == '0'
                    && line[i + 2] >= '0'
                    && line[i + 2] <= '3'
                    && line[i + 3] >= '0'
                    && line[i + 3] <= '7') {
                out[o++] = (byte) ((line[i + 2] - '0') * 8 + (line[i + 3] - '0'));
                i += 3;
            } else {
                out[o++] = line[i];
            }
        }
        return o == n ? out : java.util.Arrays.copyOf(out, o);
    }

    private static boolean digits(String s, int from, int to) {
        if (to > s.length() || from >= to) return false;
        for (int i = from; i < to; i++) {
            if (!isDigit(s.charAt(i))) return false;
        }
        return true;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isLetter(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }
}
