package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class JsonEscapeTest {
    private static String written(int c) {
        byte[] b = new byte[6];
        return new String(b, 0, JsonEscape.write(c, b, 0), StandardCharsets.US_ASCII);
    }

    @Test
    void bytesEscapeAsPythonsJsonDumpsDoes() {
        for (int c = 0; c < 0x80; c++) {
            assertEquals(c < 0x20 || c == '"' || c == '\\', JsonEscape.needed(c), "char " + c);
        }
        assertEquals("\\\"", written('"'));
        assertEquals("\\\\", written('\\'));
        assertEquals("\\n", written('\n'));
        assertEquals("\\r", written('\r'));
        assertEquals("\\t", written('\t'));
        assertEquals("\\b", written('\b'));
        assertEquals("\\f", written('\f'));
        assertEquals("\\u0001", written(1));
        assertEquals("\\u001f", written(0x1f));
        byte[] b = new byte[6];
        assertEquals(6, JsonEscape.unicode(0x2028, b, 0));
        assertEquals("\\u2028", new String(b, StandardCharsets.US_ASCII));
    }

    @Test
    void textQuotesEveryControlCharacterAsItsCode() {
        assertEquals("\"a\\\"b\\\\c\\u000a\\u0001é\"", JsonEscape.quote("a\"b\\c\n\u0001é"));
    }
}
