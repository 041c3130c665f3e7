package io.auditpipe.parser;

/**
 * A normalized event, or the reason the record could not become one, or (rarely) word that the
 * message was not a record at all but the file's own framing. Exactly one of the three.
 *
 * @param failureReason human-readable, specific reason, e.g. "missing required field 'record'"
 */
public record ParseResult(AuditEvent event, String failureReason, String framing) {

    public static ParseResult ok(AuditEvent event) {
        return new ParseResult(event, null, null);
    }

    public static ParseResult failed(String reason) {
        return new ParseResult(null, reason, null);
    }

    /**
     * The message holds only what the file format wraps records in (the XML declaration, {@code
     * <AUDIT>}, {@code </AUDIT>}; the JSON array's {@code [ , ]}) and nothing of a record: a
     * collector framing records sends such a piece when the server closes a file. Nothing was lost,
     * so it is no dead letter; the job counts it.
     */
    public static ParseResult framing(String what) {
        return new ParseResult(null, null, what);
    }

    public boolean isOk() {
        return event != null;
    }

    public boolean isFraming() {
        return framing != null;
    }

    @Override
    public String toString() {
        return isOk()
                ? "ok(" + event + ")"
                : isFraming() ? "framing(" + framing + ")" : "failed(" + failureReason + ")";
    }
}
