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
        register(m, new McafeeJsonParser());
        PARSERS = Collections.unmodifiableMap(m);
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

    /** Parses a line in the format its source descriptor names. */
    public static ParseResult parse(byte[] line, SourceDescriptor source) {
        AuditLineParser parser = forName(source.format());
        if (parser == null) {
            return ParseResult.failed("unknown audit format '" + source.format() + "' (known: " + names() + ")");
        }
        return parser.parse(line, source);
    }
}
