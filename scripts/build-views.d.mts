export declare const VIEWS_DIR: string;
export declare const VIEWS_OUT: string;
export declare const VIEW_BUDGET_GZIP: number;
export declare const VIEWS: { entry: string; file: string; title: string }[];
export declare function externalReferences(html: string): string[];
export declare function buildViews(opts?: { quiet?: boolean }): Promise<{ file: string; bytes: number; gzip: number }[]>;
