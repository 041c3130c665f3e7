package io.auditpipe.parser;

/** Either a normalized event or the reason the line could not become one. Never both. */
public final class ParseResult {
    private final AuditEvent event;
    private final String failureReason;

    private ParseResult(AuditEvent event, String failureReason) {
        this.event = event;
        this.failureReason = failureReason;
    }

    public static ParseResult ok(AuditEvent event) {
        return new ParseResult(event, null);
    }

    public static ParseResult failed(String reason) {
        return new ParseResult(null, reason);
    }

    public boolean isOk() { return event != null; }

    public AuditEvent event() { return event; }

    /** Human-readable, specific reason, e.g. "missing required field 'record'". */
    public String failureReason() { return failureReason; }

    @Override
    public String toString() {
        return isOk() ? "ok(" + event + ")" : "failed(" + failureReason + ")";
    }
}
