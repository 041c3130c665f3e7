package io.auditpipe.parser;

/**
 * What every parser shares: its format name and framing, and the first check, that the record is
 * text at all (not empty, valid UTF-8), before the format's own parsing of it.
 */
abstract class ReadableRecordParser implements AuditLineParser {
    private final String format;
    private final Framing framing;

    protected ReadableRecordParser(String format, Framing framing) {
        this.format = format;
        this.framing = framing;
    }

    @Override
    public final String formatName() {
        return format;
    }

    @Override
    public final Framing framing() {
        return framing;
    }

    @Override
    public final ParseResult parse(byte[] line, SourceDescriptor source) {
        return parse(line, source, System.currentTimeMillis());
    }

    /**
     * A record in a syslog envelope ({@link SyslogEnvelope}) is read from its body, with what the
     * header says ({@link #parseEnveloped}).
     */
    @Override
    public final ParseResult parse(byte[] line, SourceDescriptor source, long receivedMillis) {
        String unreadable = RecordText.problem(line);
        if (unreadable != null) return ParseResult.failed(unreadable);
        SyslogEnvelope envelope;
        try {
            envelope = SyslogEnvelope.read(line, source.zone(), receivedMillis);
        } catch (SyslogEnvelope.Malformed e) {
            return ParseResult.failed(e.getMessage());
        }
        if (envelope == null) return parseReadable(line, source);
        if (RecordText.isBlank(envelope.body())) {
            return ParseResult.failed(
                    "the syslog message ("
                            + envelope.sender()
                            + ") holds no record after its header");
        }
        return withEnvelope(parseEnveloped(envelope.body(), source, envelope), envelope);
    }

    /** Parses a record that is non-blank, valid UTF-8 text. Never throws for bad input. */
    protected abstract ParseResult parseReadable(byte[] line, SourceDescriptor source);

    /**
     * Parses the body of a record that came in a syslog envelope: as a record of its own, unless
     * the format writes less through syslog (MariaDB: no time of its own, which the header gives).
     */
    protected ParseResult parseEnveloped(
            byte[] body, SourceDescriptor source, SyslogEnvelope envelope) {
        return parseReadable(body, source);
    }

    /**
     * The event with the header's host and tag in {@code extra}, or the failure saying who sent it.
     */
    static ParseResult withEnvelope(ParseResult r, SyslogEnvelope envelope) {
        if (r.isOk()) {
            if (envelope.host() != null) r.event().extra.put("syslog_host", envelope.host());
            if (envelope.tag() != null) r.event().extra.put("syslog_tag", envelope.tag());
            return r;
        }
        return r.isFraming()
                ? r
                : ParseResult.failed(
                        r.failureReason() + " (in a syslog message: " + envelope.sender() + ")");
    }
}
