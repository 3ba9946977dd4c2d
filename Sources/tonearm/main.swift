#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import TonearmCLI

exit(TonearmCommand.run(Array(CommandLine.arguments.dropFirst()), console: Console.standard()))
