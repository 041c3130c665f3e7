package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The validator finds the first invalid byte where the JDK's strict UTF-8 decoder stops. */
class Utf8Test {
    @Provide
    Arbitrary<byte[]> lines() {
        // mostly ASCII, as audit logs are, with valid and broken sequences at any offset
        Arbitrary<byte[]> piece =
                Arbitraries.of("a", "abcdefgh", "0123456789abcdef", "ü", "日", "🎉", "\u0000")
                        .map(s -> s.getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> broken =
                Arbitraries.of(
                        new byte[] {(byte) 0xff},
                        new byte[] {(byte) 0xc0, (byte) 0x80},
                        new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
                        new byte[] {(byte) 0xe6, (byte) 0x97},
                        new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
                        new byte[] {(byte) 0x80});
        return Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(9, piece), net.jqwik.api.Tuple.of(1, broken))
                .list()
                .ofMaxSize(24)
                .map(
                        parts -> {
                            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
                            parts.forEach(out::writeBytes);
                            return out.toByteArray();
                        });
    }

    @Property(tries = 5000)
    void stopsWhereTheJdkDecoderStops(@ForAll("lines") byte[] line) {
        assertEquals(jdkFirstInvalid(line), Utf8.firstInvalidByte(line));
    }

    private static int jdkFirstInvalid(byte[] b) {
        CharsetDecoder d =
                StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(b);
        CoderResult r = d.decode(in, CharBuffer.allocate(b.length * 2 + 2), true);
        return r.isError() ? in.position() : -1;
    }
}
