package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Percona Server audit_log plugin, {@code audit_log_format=CSV}: one record per line, but a
 * statement's newlines are written as they are (only {@code "} is escaped, doubled), so a record
 * with a multi-line statement spans several lines; the collector frames it from its first line
 * (docs/formats.md, "Framing"). Three layouts, told apart by where the one unquoted column (the
 * status) is:
 *
 * <pre>
 * query-type:  "name","record","timestamp","command_class","connection_id",status,"sqltext","user","host","os_user","ip","db"
 * connection:  "name","record","timestamp","connection_id",status,"user","priv_user","os_login","proxy_user","host","ip","db"
 * audit start: "name","record","timestamp","mysql_version","startup_options","os_version"
 * </pre>
 *
 * The fields map as the JSON format's do ({@link PerconaRecords}); identity is the plugin's record.
 */
public final class PerconaCsvParser extends ReadableRecordParser {
    public static final String FORMAT = "percona-csv";

    public PerconaCsvParser() {
        super(FORMAT, FRAMING);
    }

    private static final String[] QUERY = {
        "name",
        "record",
        "timestamp",
        "command_class",
        "connection_id",
        "status",
        "sqltext",
        "user",
        "host",
        "os_user",
        "ip",
        "db"
    };
    private static final String[] CONNECTION = {
        "name",
        "record",
        "timestamp",
        "connection_id",
        "status",
        "user",
        "priv_user",
        "os_login",
        "proxy_user",
        "host",
        "ip",
        "db"
    };
    private static final String[] AUDIT = {
        "name", "record", "timestamp", "mysql_version", "startup_options", "os_version"
    };

    /**
     * A record starts with its quoted name and record id ({@code "Query","12_2026-...}). It ends
     * with its last two columns, the client's IP address and the database ({@code
     * ...,"10.0.0.5","shop"}), or it is a one-line Audit/NoAudit record. The end is what rsyslog
     * frames by: framed by its start, the last record of a rotated file was never shipped (imfile
     * drops an unfinished message when it closes a renamed file; measured, 5 records of 8,000 in 5
     * rotations). The pattern also matches a statement line that ends in {@code ",","} (written
     * {@code "","",""}, e.g. {@code REPLACE(s, ",","} and a newline; found by trying every short
     * statement): such a record is cut there, and both parts become dead letters saying so.
     */
    static final Framing FRAMING =
            new Framing(
                    "^\"[A-Za-z ]+\",\"[0-9]+_",
                    "(\",\"[0-9A-Fa-f.:]*\",\"[^\"]*\"|^\"(Audit|NoAudit)\",.*\")$");

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        String text = new String(line, StandardCharsets.UTF_8);
        if (text.endsWith("\r")) text = text.substring(0, text.length() - 1);
        List<String> values = new ArrayList<>(12);
        List<Boolean> quoted = new ArrayList<>(12);
        String problem = split(text, values, quoted);
        if (problem != null) {
            return ParseResult.failed(problem);
        }
        String[] names;
        if (values.size() == 12 && !quoted.get(5) && quoted.get(4)) {
            names = QUERY;
        } else if (values.size() == 12 && !quoted.get(4)) {
            names = CONNECTION;
        } else if (values.size() == 6 && !quoted.contains(false)) {
            names = AUDIT;
        } else {
            return ParseResult.failed(
                    "not a Percona CSV audit record: "
                            + values.size()
                            + " columns (expected 12, with the status unquoted, or 6)");
        }
        AuditEvent e = PerconaRecords.newEvent();
        for (int i = 0; i < names.length; i++) {
            String value = values.get(i);
            if ("status".equals(names[i]) && !value.matches("-?\\d+")) {
                return ParseResult.failed("field 'status' is not an integer: '" + value + "'");
            }
            problem = PerconaRecords.set(e, names[i], value, source);
            if (problem != null) {
                return ParseResult.failed(problem);
            }
        }
        return PerconaRecords.finish(e, source);
    }

    /**
     * Splits CSV columns into values (quotes undone) and whether each was quoted; returns a problem
     * or null.
     */
    static String split(String text, List<String> values, List<Boolean> quoted) {
        int i = 0, n = text.length();
        while (true) {
            if (i < n && text.charAt(i) == '"') {
                StringBuilder v = new StringBuilder();
                i++;
                while (true) {
                    if (i >= n) {
                        return "column " + (values.size() + 1) + " has no closing quote";
                    }
                    char c = text.charAt(i);
                    if (c == '"') {
                        if (i + 1 < n && text.charAt(i + 1) == '"') {
                            v.append('"');
                            i += 2;
                            continue;
                        }
                        i++;
                        break;
                    }
                    v.append(c);
                    i++;
                }
                values.add(v.toString());
                quoted.add(true);
            } else {
                int comma = text.indexOf(',', i);
                int stop = comma < 0 ? n : comma;
                String v = text.substring(i, stop);
                if (v.indexOf('"') >= 0) {
                    return "column "
                            + (values.size() + 1)
                            + " has a quote inside an unquoted value";
                }
                values.add(v);
                quoted.add(false);
                i = stop;
            }
            // Percona's older CSV writes ", " between columns
            while (i < n && text.charAt(i) == ' ') i++;
            if (i >= n) {
                return null;
            }
            if (text.charAt(i) != ',') {
                return "column "
                        + values.size()
                        + " is followed by '"
                        + text.charAt(i)
                        + "', expected a comma";
            }
            i++;
            while (i < n && text.charAt(i) == ' ') i++;
            if (values.size() > 64) {
                return "more than 64 columns";
            }
        }
    }
}
