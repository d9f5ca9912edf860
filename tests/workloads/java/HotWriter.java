// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// --stacks ground truth for JIT code: hotWriterJava writes 64 bytes to
// /dev/null N times (one write(2) each), in a loop the JIT compiles, so
// that its frames are JIT code the perf map names. Run with
// -XX:+PreserveFramePointer so that the walk gets through them.
import java.io.FileOutputStream;
import java.io.IOException;

public class HotWriter {
    static void hotWriterJava(FileOutputStream out, byte[] buf, int n)
            throws IOException {
        for (int i = 0; i < n; i++)
            out.write(buf);
    }

    public static void main(String[] args) throws IOException {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 200000;
        byte[] buf = new byte[64];
        try (FileOutputStream out = new FileOutputStream("/dev/null")) {
            hotWriterJava(out, buf, n);
        }
    }
}
