package io.auditpipe.parser;

import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamConstants;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * The XML audit logs: one {@code <AUDIT_RECORD>} element per record, inside an {@code <AUDIT>} root
 * that is open while the server writes the file and closed ({@code </AUDIT>}) when it closes it.
 * Two layouts, both read by this parser whichever the file uses:
 *
 * <ul>
 *   <li>OLD: the fields are attributes, one per line ({@code <AUDIT_RECORD\n NAME="Query"\n ...
 *       />});
 *   <li>NEW: the fields are child elements ({@code <AUDIT_RECORD>\n <NAME>Query</NAME>
 *       ...</AUDIT_RECORD>}).
 * </ul>
 *
 * Two writers, registered as two formats for what the documents say ({@code format}) and for the
 * docs; the field names are the same but for the record id: the Percona Server audit_log plugin
 * ({@code percona-xml}, {@code RECORD}, timestamps {@code 2026-11-22T09:00:00 UTC}) and MySQL
 * Enterprise Audit / Percona's audit_log_filter ({@code mysql-enterprise-xml}, {@code RECORD_ID};
 * Enterprise writes UTC with the suffix, audit_log_filter the server's local time without it, read
 * in the source's time zone).
 *
 * <p>A record spans several lines; the collector frames it whole (docs/formats.md, "Framing"), so
 * one message holds one record. The first record of a file comes with the file's XML declaration
 * and {@code <AUDIT>} in front, a record framed from its start line may come with the file's {@code
 * </AUDIT>} behind: both are accepted and nothing else around the record is.
 *
 * <p>Values are XML-escaped by the servers ({@code &lt; &gt; &amp; &quot;}, newlines as {@code
 * &#10;}, tabs as they are, which in an attribute are kept, not normalized to a space); a NEW
 * {@code <SQLTEXT encode="base64">} is decoded. Fields map as the JSON format's do ({@link
 * PerconaRecords}); an element with children (audit_log_filter's {@code <MAP>}) is kept in {@code
 * extra} as its text. No DTD, no entities: a record cannot make the parser read anything.
 */
public final class AuditXmlParser extends ReadableRecordParser {
    public static final String PERCONA = "percona-xml";
    public static final String MYSQL_ENTERPRISE = "mysql-enterprise-xml";

    private static final ThreadLocal<XMLInputFactory> FACTORY =
            ThreadLocal.withInitial(
                    () -> {
                        XMLInputFactory f = XMLInputFactory.newFactory();
                        f.setProperty(XMLInputFactory.SUPPORT_DTD, false);
                        f.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
                        f.setProperty(XMLInputFactory.IS_REPLACING_ENTITY_REFERENCES, true);
                        f.setProperty(XMLInputFactory.IS_COALESCING, true);
                        f.setProperty(XMLInputFactory.IS_NAMESPACE_AWARE, false);
                        return f;
                    });

    public AuditXmlParser(String format) {
        super(format, FRAMING);
    }

    /**
     * A record starts with {@code <AUDIT_RECORD}; it ends with {@code </AUDIT_RECORD>} (NEW) or,
     * OLD, with a line that is {@code />} alone or its last attribute and {@code />} ({@code
     * DB="shop"/>}), or the whole record on one line. Not with every line ending in {@code />}: NEW
     * writes empty fields as {@code <OS_LOGIN/>}. Values cannot hold a {@code "} or a newline (the
     * servers escape them), so the patterns cannot match inside one.
     */
    static final Framing FRAMING =
            new Framing(
                    "^ *<AUDIT_RECORD",
                    "(^ */>|^ *[A-Z_]+=\"[^\"]*\"/>|^ *<AUDIT_RECORD .*/>|</AUDIT_RECORD>) *$");

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        String text = new String(line, StandardCharsets.UTF_8);
        int start = text.indexOf("<AUDIT_RECORD");
        if (start < 0) {
            return onlyFraming(text)
                    ? ParseResult.framing("the XML file's declaration, <AUDIT> or </AUDIT>")
                    : ParseResult.failed("not an XML audit record: no <AUDIT_RECORD");
        }
        String before = text.substring(0, start);
        if (!onlyFraming(before)) {
            return ParseResult.failed(
                    "unexpected text before <AUDIT_RECORD: '" + clip(before.strip()) + "'");
        }
        int end = recordEnd(text, start);
        if (end < 0) {
            return ParseResult.failed("incomplete XML audit record: no end of <AUDIT_RECORD");
        }
        String after = text.substring(end);
        if (!onlyFraming(after)) {
            return ParseResult.failed(
                    "unexpected text after the audit record: '" + clip(after.strip()) + "'");
        }
        AuditEvent e = PerconaRecords.newEvent();
        try {
            String problem = read(keepTabsInAttributes(text.substring(start, end)), e, source);
            if (problem != null) {
                return ParseResult.failed(problem);
            }
        } catch (XMLStreamException ex) {
            String where =
                    ex.getLocation() == null
                            ? ""
                            : " at line "
                                    + ex.getLocation().getLineNumber()
                                    + " column "
                                    + ex.getLocation().getColumnNumber();
            return ParseResult.failed("invalid XML" + where + ": " + firstLine(ex.getMessage()));
        } catch (RuntimeException ex) {
            return ParseResult.failed("unreadable XML record: " + ex);
        }
        return PerconaRecords.finish(e, source);
    }

    /**
     * The index just past the record that starts at {@code start}: its {@code />} or {@code
     * </AUDIT_RECORD>}.
     */
    private static int recordEnd(String text, int start) {
        int close = text.lastIndexOf("</AUDIT_RECORD>");
        if (close >= start) {
            return close + "</AUDIT_RECORD>".length();
        }
        int empty = text.lastIndexOf("/>");
        return empty > start ? empty + 2 : -1;
    }

    /**
     * The servers escape {@code < > & "} and newlines in values but not tabs, and an XML parser
     * turns a tab inside an attribute value into a space (attribute-value normalization): a
     * statement with a tab would be stored changed. Inside attribute values (between the quotes of
     * a tag) a tab becomes {@code &#9;}, which the parser keeps as a tab.
     */
    static String keepTabsInAttributes(String record) {
        if (record.indexOf('\t') < 0) return record;
        StringBuilder b = new StringBuilder(record.length() + 16);
        boolean inTag = false, inQuote = false;
        for (int i = 0; i < record.length(); i++) {
            char c = record.charAt(i);
            if (c == '<' && !inQuote) inTag = true;
            else if (c == '>' && !inQuote) inTag = false;
            else if (c == '"' && inTag) inQuote = !inQuote;
            if (c == '\t' && inQuote) b.append("&#9;");
            else b.append(c);
        }
        return b.toString();
    }

    /**
     * Whether {@code s} holds nothing but whitespace, an XML declaration, {@code <AUDIT>} and
     * {@code </AUDIT>}.
     */
    static boolean onlyFraming(String s) {
        String rest = s.strip();
        while (!rest.isEmpty()) {
            if (rest.startsWith("<?xml")) {
                int end = rest.indexOf("?>");
                if (end < 0) return false;
                rest = rest.substring(end + 2).strip();
            } else if (rest.startsWith("<AUDIT>")) {
                rest = rest.substring("<AUDIT>".length()).strip();
            } else if (rest.startsWith("</AUDIT>")) {
                rest = rest.substring("</AUDIT>".length()).strip();
            } else {
                return false;
            }
        }
        return true;
    }

    private static String read(String record, AuditEvent e, SourceDescriptor source)
            throws XMLStreamException {
        XMLStreamReader r = FACTORY.get().createXMLStreamReader(new StringReader(record));
        try {
            while (r.hasNext() && r.next() != XMLStreamConstants.START_ELEMENT) {
                // the declaration-free fragment starts with the element; nothing to skip but
                // whitespace
            }
            if (!r.isStartElement() || !"AUDIT_RECORD".equals(r.getLocalName())) {
                return "not an XML audit record: the element is not AUDIT_RECORD";
            }
            Set<String> seen = new HashSet<>();
            for (int i = 0; i < r.getAttributeCount(); i++) {
                String problem =
                        set(e, r.getAttributeLocalName(i), r.getAttributeValue(i), seen, source);
                if (problem != null) return problem;
            }
            while (r.hasNext()) {
                int ev = r.next();
                if (ev == XMLStreamConstants.START_ELEMENT) {
                    String field = r.getLocalName();
                    boolean base64 = "base64".equalsIgnoreCase(r.getAttributeValue(null, "encode"));
                    StringBuilder value = new StringBuilder();
                    boolean nested = readElementText(r, value);
                    String text = value.toString();
                    if (base64 && !nested) {
                        try {
                            text =
                                    new String(
                                            Base64.getMimeDecoder().decode(text.strip()),
                                            StandardCharsets.UTF_8);
                        } catch (IllegalArgumentException ex) {
                            return "field '"
                                    + field.toLowerCase(Locale.ROOT)
                                    + "' says base64 but is not: "
                                    + ex.getMessage();
                        }
                    }
                    String problem =
                            nested
                                    ? setExtra(e, field, text.strip(), seen)
                                    : set(e, field, text, seen, source);
                    if (problem != null) return problem;
                } else if (ev == XMLStreamConstants.END_ELEMENT) {
                    break; // </AUDIT_RECORD>
                } else if (ev == XMLStreamConstants.CHARACTERS && !r.isWhiteSpace()) {
                    return "text directly inside AUDIT_RECORD: '" + clip(r.getText().strip()) + "'";
                }
            }
            while (r.hasNext()) {
                int ev = r.next();
                if (ev != XMLStreamConstants.END_DOCUMENT
                        && ev != XMLStreamConstants.SPACE
                        && !(ev == XMLStreamConstants.CHARACTERS && r.isWhiteSpace())
                        && ev != XMLStreamConstants.COMMENT) {
                    return "more than one record in one message";
                }
            }
            return null;
        } finally {
            r.close();
        }
    }

    /**
     * Appends the text of the current element's subtree; true if it had child elements. Ends on its
     * END_ELEMENT.
     */
    private static boolean readElementText(XMLStreamReader r, StringBuilder out)
            throws XMLStreamException {
        int depth = 1;
        boolean nested = false;
        while (depth > 0) {
            int ev = r.next();
            if (ev == XMLStreamConstants.START_ELEMENT) {
                depth++;
                nested = true;
                if (out.length() > 0 && !Character.isWhitespace(out.charAt(out.length() - 1)))
                    out.append(' ');
            } else if (ev == XMLStreamConstants.END_ELEMENT) {
                depth--;
            } else if (ev == XMLStreamConstants.CHARACTERS
                    || ev == XMLStreamConstants.CDATA
                    || ev == XMLStreamConstants.SPACE) {
                if (nested && r.isWhiteSpace()) {
                    if (out.length() > 0 && !Character.isWhitespace(out.charAt(out.length() - 1)))
                        out.append(' ');
                } else {
                    out.append(r.getText());
                }
            }
        }
        return nested;
    }

    private static String set(
            AuditEvent e, String field, String value, Set<String> seen, SourceDescriptor source) {
        String name = field.toLowerCase(Locale.ROOT);
        if (!seen.add(name)) {
            return "field '" + name + "' appears twice";
        }
        if ("record".equals(name) && seen.contains("record_id")
                || "record_id".equals(name) && seen.contains("record")) {
            return "both 'record' and 'record_id'";
        }
        return PerconaRecords.set(e, name, value, source);
    }

    private static String setExtra(AuditEvent e, String field, String value, Set<String> seen) {
        String name = field.toLowerCase(Locale.ROOT);
        if (!seen.add(name)) {
            return "field '" + name + "' appears twice";
        }
        if (PerconaRecords.KNOWN_TEXT_FIELDS.contains(name)
                || PerconaRecords.INTEGER_FIELDS.contains(name)) {
            return "field '" + name + "' has child elements, expected text";
        }
        e.extra.put(name, value);
        return null;
    }

    private static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        String t = s.strip();
        int nl = t.lastIndexOf("Message: ");
        if (nl >= 0) t = t.substring(nl + "Message: ".length());
        int eol = t.indexOf('\n');
        return eol < 0 ? t : t.substring(0, eol);
    }
}
