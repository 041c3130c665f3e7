package io.auditpipe.parser;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import java.io.IOException;
import java.io.StringWriter;

/** What every parser checks first, and the JSON helpers the JSON formats share. */
final class RecordText {
    private RecordText() {}

    /**
     * Audit records carry whole SQL statements: Jackson's default 20M string limit is kept, the
     * nesting is bounded; anything beyond is a dead letter with the reason, not a crash.
     */
    static final JsonFactory JSON =
            JsonFactory.builder()
                    .streamReadConstraints(
                            StreamReadConstraints.builder().maxNestingDepth(64).build())
                    .build();

    /**
     * The dead letter of a record the JSON reader gave up on: where the JSON is invalid and why
     * (the line too, for formats whose records span lines), else what could not be read.
     */
    static ParseResult unreadable(Exception ex, boolean withLine) {
        if (ex instanceof JsonParseException j) {
            return ParseResult.failed(
                    "invalid JSON at "
                            + (withLine ? "line " + j.getLocation().getLineNr() + " " : "")
                            + "column "
                            + j.getLocation().getColumnNr()
                            + ": "
                            + j.getOriginalMessage());
        }
        return ParseResult.failed("unreadable record: " + ex.getMessage());
    }

    /**
     * Why a field of the wrong JSON type is refused ("field 'x' is an object, expected a string"),
     * its value skipped.
     */
    static String wrongType(JsonParser p, JsonToken value, String field, String expected)
            throws IOException {
        if (!value.isScalarValue()) p.skipChildren();
        return "field '" + field + "' is " + describe(value) + ", expected " + expected;
    }

    /** Why the record cannot be read as text at all (empty, not UTF-8), or null. */
    static String problem(byte[] record) {
        if (record == null || record.length == 0 || isBlank(record)) {
            return "empty line";
        }
        int bad = Utf8.firstInvalidByte(record);
        return bad >= 0 ? "invalid UTF-8 at byte " + bad : null;
    }

    static boolean isBlank(byte[] b) {
        for (byte c : b) {
            if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
        }
        return true;
    }

    /** A JSON token in words, for a reason: "an object", "a number" ... */
    static String describe(JsonToken t) {
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> "a " + t;
        };
    }

    /** Any JSON value as text: scalars as they are, arrays and objects as compact JSON. */
    static String anyAsText(JsonParser p, JsonToken value) throws IOException {
        if (value == JsonToken.VALUE_NULL) return null;
        if (value.isScalarValue()) return p.getText();
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.copyCurrentStructure(p);
        }
        return out.toString();
    }
}
