package io.auditpipe.parser;

import java.nio.charset.StandardCharsets;

/**
 * Format {@code syslog}: each message one record of any format, in a syslog envelope or not ({@link
 * SyslogEnvelope}, read once by {@link ReadableRecordParser}), the format told by the record itself
 * ({@link AuditFormats#detect}) and the record read by that format's parser. For sources whose
 * records arrive through syslog: a syslog daemon's file, or a receiver that many servers send to.
 * The event's {@code format} is the record's; the header's host and tag are in {@code extra}
 * ({@code syslog_host}, {@code syslog_tag}). A message that holds no record of a known format is a
 * failure saying how it begins (and, in an envelope, who sent it).
 */
final class SyslogRecordParser extends ReadableRecordParser {
    static final String FORMAT = "syslog";

    /** How much of a message that is no record its failure shows. */
    private static final int PREVIEW = 60;

    SyslogRecordParser() {
        super(FORMAT, Framing.LINES);
    }

    @Override
    protected ParseResult parseReadable(byte[] line, SourceDescriptor source) {
        String format = AuditFormats.detect(line, false);
        return format == null
                ? unknown(line, " (a message without a syslog header)")
                : parserOf(format).parseReadable(line, as(source, format));
    }

    @Override
    protected ParseResult parseEnveloped(
            byte[] body, SourceDescriptor source, SyslogEnvelope envelope) {
        String format = AuditFormats.detect(body, true);
        return format == null
                ? unknown(body, "")
                : parserOf(format).parseEnveloped(body, as(source, format), envelope);
    }

    private static ReadableRecordParser parserOf(String format) {
        return (ReadableRecordParser)
                AuditFormats.forName(format); // every detected format's parser is one
    }

    private static SourceDescriptor as(SourceDescriptor source, String format) {
        return new SourceDescriptor(
                source.server(),
                format,
                source.source(),
                source.collector(),
                source.cut(),
                source.zone(),
                null);
    }

    private static ParseResult unknown(byte[] record, String where) {
        String s =
                new String(record, 0, Math.min(record.length, PREVIEW * 4), StandardCharsets.UTF_8)
                        .strip();
        return ParseResult.failed(
                "no audit record of a known format; it begins '"
                        + (s.length() > PREVIEW ? s.substring(0, PREVIEW) + "..." : s)
                        + "'"
                        + where);
    }
}
