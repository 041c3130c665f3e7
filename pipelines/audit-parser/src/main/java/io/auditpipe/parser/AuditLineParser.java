package io.auditpipe.parser;

/**
 * Parses one line of one audit log format into the normalized event model.
 *
 * <p>Implementations never throw for bad input: every problem comes back as {@link
 * ParseResult#failed(String)} with a reason that goes into the dead letter. They are stateless and
 * thread-safe.
 */
public interface AuditLineParser {
    /** The format name used in configuration and in the message key, e.g. "percona-json". */
    String formatName();

    /** {@link #parse(byte[], SourceDescriptor, long)} received now. */
    ParseResult parse(byte[] line, SourceDescriptor source);

    /**
     * Parses a record received at {@code receivedMillis} (the Kafka record's time; a file's
     * modification time offline): the year of a syslog header's time written without one ({@link
     * SyslogEnvelope}).
     */
    default ParseResult parse(byte[] line, SourceDescriptor source, long receivedMillis) {
        return parse(line, source);
    }

    /**
     * How the collectors cut this format's records out of the file; one record per line unless
     * said.
     */
    default Framing framing() {
        return Framing.LINES;
    }
}
