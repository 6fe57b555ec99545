export declare const body: string;
export declare const headers: Record<string, string>;
