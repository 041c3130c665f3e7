package io.auditpipe.parser;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The registry of audit log formats by name: the one place a new format is added (and
 * cli/auditpipe/formats.py, which knows how the collectors frame and detect each; a test keeps the
 * two in step).
 */
public final class AuditFormats {
    private static final Map<String, AuditLineParser> PARSERS;

    static {
        Map<String, AuditLineParser> m = new LinkedHashMap<>();
        register(m, new PerconaJsonParser());
        register(m, new PerconaCsvParser());
        register(m, new AuditXmlParser(AuditXmlParser.PERCONA));
        register(m, new MysqlEnterpriseJsonParser());
        register(m, new AuditXmlParser(AuditXmlParser.MYSQL_ENTERPRISE));
        register(m, new MariadbAuditParser());
        register(m, new MariadbAuditParser(MariadbAuditParser.AURORA));
        register(m, new AzureMysqlAuditParser());
        register(m, new CloudSqlMysqlAuditParser());
        register(m, new McafeeJsonParser());
        register(m, new SyslogRecordParser());
        PARSERS = Collections.unmodifiableMap(m);
    }

    /**
     * How a record of each format looks (a line of it; the first match wins), the same patterns as
     * cli/auditpipe/formats.py's {@code _SIGNATURES} (a test compares them): the {@code syslog}
     * format picks each message's parser by them. The XML formats differ only in the record id's
     * name, a line of its own.
     */
    static final String[][] SIGNATURES = {
        {"percona-json", "^\\s*\\{\\s*\"audit_record\"\\s*:"},
        {"mcafee-json", "^\\s*\\{\\s*\"msg-type\"\\s*:"},
        {
            "cloudsql-mysql-audit",
            "^\\s*\\{.*(google\\.cloud\\.sql\\.audit\\.v1\\.MysqlAuditEntry\"|#cloudsql_mysql_audit#)"
        },
        {
            "azure-mysql-audit",
            "^\\s*\\{.*(\"(event_class(_s)?|EventClass)\"\\s*:|\"MySqlAuditLogs\")"
        },
        {"mysql-enterprise-json", "^\\s*(\\{.*)?\"class\"\\s*:\\s*\""},
        {"percona-xml", "^\\s*(RECORD=\"|<RECORD>)"},
        {"mysql-enterprise-xml", "^\\s*(RECORD_ID=\"|<RECORD_ID>)"},
        {"percona-csv", "^\"[A-Za-z ]+\",\"\\d+_\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\",\""},
        {
            "mariadb-audit",
            "^"
                    + MariadbAuditParser.TIMESTAMP_LAYOUT.pattern()
                    + ",[^,]*,[^,]*,[^,]*,\\d+,\\d+,[A-Z_]+,"
        },
        {
            "aurora-audit",
            "^(\\d{4}-\\d\\d-\\d\\dT[^ ,]+Z )?\\d{16},[^,]*,[^,]*,[^,]*,\\d+,\\d+,[A-Z_]+,"
        },
    };

    /**
     * Records only syslog carries: MariaDB's {@code [syslog_info
     * ]serverhost,user,host,connection,query,OPERATION,}.
     */
    static final String[][] ENVELOPED_SIGNATURES = {
        {"mariadb-audit", "^[^,]*,[^,]*,[^,]*,\\d+,\\d+,[A-Z_]+,"},
    };

    private static final java.util.regex.Pattern[] PATTERNS = compile(SIGNATURES);
    private static final java.util.regex.Pattern[] ENVELOPED_PATTERNS =
            compile(ENVELOPED_SIGNATURES);

    /** The lines of a record looked at to tell its format. */
    private static final int DETECT_LINES = 20;

    /**
     * The characters of a line looked at to tell its format: a statement's length costs nothing.
     */
    private static final int DETECT_CHARS = 4096;

    private static java.util.regex.Pattern[] compile(String[][] signatures) {
        java.util.regex.Pattern[] p = new java.util.regex.Pattern[signatures.length];
        for (int i = 0; i < p.length; i++) p[i] = java.util.regex.Pattern.compile(signatures[i][1]);
        return p;
    }

    /** Each format's signature, in order of trial: for the CLI's comparison. */
    public static Map<String, String> signatures() {
        Map<String, String> m = new LinkedHashMap<>();
        for (String[] s : SIGNATURES) m.put(s[0], s[1]);
        return m;
    }

    /**
     * The format of a record, from the first of its lines a signature matches, or null.
     *
     * @param enveloped the record came in a syslog envelope, where MariaDB writes a shorter record
     */
    public static String detect(byte[] record, boolean enveloped) {
        // ISO-8859-1 keeps each byte a character; the signatures are ASCII
        String text =
                new String(
                        record,
                        0,
                        Math.min(record.length, DETECT_LINES * DETECT_CHARS),
                        java.nio.charset.StandardCharsets.ISO_8859_1);
        int start = 0;
        for (int n = 0; n < DETECT_LINES && start < text.length(); n++) {
            int end = text.indexOf('\n', start);
            if (end < 0) end = text.length();
            CharSequence line = text.subSequence(start, Math.min(end, start + DETECT_CHARS));
            for (int i = 0; i < PATTERNS.length; i++) {
                if (PATTERNS[i].matcher(line).find()) return SIGNATURES[i][0];
            }
            if (enveloped && n == 0) {
                for (int i = 0; i < ENVELOPED_PATTERNS.length; i++) {
                    if (ENVELOPED_PATTERNS[i].matcher(line).find())
                        return ENVELOPED_SIGNATURES[i][0];
                }
            }
            start = end + 1;
        }
        return null;
    }

    private AuditFormats() {}

    private static void register(Map<String, AuditLineParser> m, AuditLineParser p) {
        m.put(p.formatName(), p);
    }

    /** The parser for a format name, or null if no such format is known. */
    public static AuditLineParser forName(String format) {
        return PARSERS.get(format);
    }

    public static Set<String> names() {
        return PARSERS.keySet();
    }

    /** Parses a line in the format its source descriptor names, received now. */
    public static ParseResult parse(byte[] line, SourceDescriptor source) {
        return parse(line, source, System.currentTimeMillis());
    }

    /**
     * Parses a line in the format its source descriptor names, received at {@code receivedMillis}.
     */
    public static ParseResult parse(byte[] line, SourceDescriptor source, long receivedMillis) {
        AuditLineParser parser = forName(source.format());
        if (parser == null) {
            return ParseResult.failed(
                    "unknown audit format '" + source.format() + "' (known: " + names() + ")");
        }
        return parser.parse(line, source, receivedMillis);
    }
}
