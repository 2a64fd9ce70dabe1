/** The path of the `node` binary of the given major version (22 or 24), installing it when missing. */
export declare function nodeBinary(major: 22 | 24): string;
