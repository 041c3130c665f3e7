package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;

/**
 * Format {@code syslog}: each message one record of any format, in a syslog envelope or not
 * ({@link SyslogEnvelope}), the format told by the record itself ({@link AuditFormats#detect}) and
 * the record read by that format's parser. For sources whose records arrive through syslog: a
 * syslog daemon's file, or a receiver that many servers send to. The event's {@code format} is the
 * record's; the header's host and tag are in {@code extra} ({@code syslog_host}, {@code syslog_tag}).
 * A message that holds no record of a known format is a failure naming its sender and how it begins.
 */
final class SyslogRecordParser implements AuditLineParser {
    static final String FORMAT = "syslog";
    /** How much of a message that is no record its failure shows. */
    private static final int PREVIEW = 60;

    @Override
    public String formatName() {
        return FORMAT;
    }

    @Override
    public ParseResult parse(byte[] line, SourceDescriptor source) {
        return parse(line, source, System.currentTimeMillis());
    }

    @Override
    public ParseResult parse(byte[] line, SourceDescriptor source, long receivedMillis) {
        String unreadable = RecordText.problem(line);
        if (unreadable != null) return ParseResult.failed(unreadable);
        SyslogEnvelope envelope;
        try {
            envelope = SyslogEnvelope.read(line, source.zone(), receivedMillis);
        } catch (SyslogEnvelope.Malformed e) {
            return ParseResult.failed(e.getMessage());
        }
        byte[] body = envelope == null ? line : envelope.body;
        String format = AuditFormats.detect(body, envelope != null);
        if (format == null) {
            return ParseResult.failed("no audit record of a known format in the syslog message ("
                    + (envelope == null ? "no syslog header" : envelope.sender()) + "); it begins '" + preview(body) + "'");
        }
        SourceDescriptor as = new SourceDescriptor(source.server(), format, source.source(), source.collector(),
                source.cut(), source.zone());
        return AuditFormats.forName(format).parse(line, as, receivedMillis);
    }

    private static String preview(byte[] body) {
        String s = new String(body, 0, Math.min(body.length, PREVIEW * 4), StandardCharsets.UTF_8).strip();
        return s.length() > PREVIEW ? s.substring(0, PREVIEW) + "..." : s;
    }
}
