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
        String unreadable = RecordText.problem(line);
        return unreadable != null ? ParseResult.failed(unreadable) : parseReadable(line, source);
    }

    /** Parses a record that is non-blank, valid UTF-8 text. Never throws for bad input. */
    protected abstract ParseResult parseReadable(byte[] line, SourceDescriptor source);
}
